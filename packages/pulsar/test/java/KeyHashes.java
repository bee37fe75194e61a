// Prints, per key read from stdin (one per line, UTF-8), what Pulsar's Java client computes for it:
// JavaStringHash, Murmur3_32Hash (both as the client's routers use them, masked to 31 bits) and the
// partition each scheme picks among 7 and among 100 (MathUtils.signSafeMod, as the router calls it).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.pulsar.client.impl.JavaStringHash;
import org.apache.pulsar.client.impl.Murmur3Hash32;
import org.apache.pulsar.client.util.MathUtils;

public class KeyHashes {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    StringBuilder out = new StringBuilder();
    String key;
    while ((key = in.readLine()) != null) {
      int java = JavaStringHash.getInstance().makeHash(key);
      int murmur = Murmur3Hash32.getInstance().makeHash(key);
      out.append(java).append(' ').append(murmur).append(' ')
          .append(MathUtils.signSafeMod(java, 7)).append(' ').append(MathUtils.signSafeMod(murmur, 7)).append(' ')
          .append(MathUtils.signSafeMod(java, 100)).append(' ').append(MathUtils.signSafeMod(murmur, 100)).append('\n');
    }
    System.out.print(out);
  }
}
