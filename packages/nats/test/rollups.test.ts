import { isRustStreamError } from "@ruststream/core";
import { bytes } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { refusal, scheduleStreams } from "./scheduleSupport.js";
import { targets } from "./targets.js";

// `Nats-Rollup` on a publish, as the package's KV purges and object infos send it: a stream that
// takes rollups (here one allowing schedules, which brings them) trims the subject, or the whole
// stream on `all`; one that takes none refuses the message and keeps what it holds. On the real
// server and on the stand-in alike, through the link's stored publish (the header spelled as the
// server reads it: a publisher's header map would lower-case a user's).

const setUp = scheduleStreams();

for (const [where, connect] of targets) {
  describe(`rollups, ${where}`, () => {
    it("a stream without rollups refuses a Nats-Rollup publish, naming the option, and keeps its messages", async () => {
      const { connected, stream } = await setUp(connect, { messageSchedules: false });
      const subject = `${stream}.a`;
      const first = await connected.link.publishStored({
        subject,
        payload: bytes("kept"),
        headers: [],
      });
      const refused = await refusal(
        connected.link.publishStored({
          subject,
          payload: bytes("rolled"),
          headers: [["Nats-Rollup", "sub"]],
        }),
      );
      expect(isRustStreamError(refused, "publish-refused"), String(refused)).toBe(true);
      expect(String(refused)).toContain(`the stream that stores "${subject}" takes no rollups`);
      expect(String(refused)).toContain("allow_rollup_hdrs");
      expect(await connected.link.streamBounds(stream)).toEqual({
        first: first.sequence,
        last: first.sequence,
      });
    });

    it("a stream with rollups: `sub` keeps the subject's latest, a value in any case reads, an unknown one is refused, `all` keeps the latest alone", async () => {
      const { connected, stream, last } = await setUp(connect);
      const publish = (subject: string, rollup?: string) =>
        connected.link.publishStored({
          subject: `${stream}.${subject}`,
          payload: bytes(subject),
          headers: rollup === undefined ? [] : [["Nats-Rollup", rollup]],
        });
      const a1 = await publish("a");
      const b = await publish("b");
      await publish("a");
      const rolled = await publish("a", "SUB");
      // a's two earlier messages went; b stays, first in the stream.
      expect(await connected.link.streamBounds(stream)).toEqual({
        first: b.sequence,
        last: rolled.sequence,
      });
      expect((await last(`${stream}.a`))?.sequence).toBe(rolled.sequence);
      expect(a1.sequence).toBeLessThan(b.sequence);

      const unknown = await refusal(publish("a", "Everything"));
      expect(isRustStreamError(unknown, "publish-refused"), String(unknown)).toBe(true);
      expect(String(unknown)).toContain('rollup value invalid: "everything"');
      expect((await connected.link.streamBounds(stream)).last).toBe(rolled.sequence);

      const all = await publish("c", "all");
      expect(await connected.link.streamBounds(stream)).toEqual({
        first: all.sequence,
        last: all.sequence,
      });
      expect(await last(`${stream}.b`)).toBeUndefined();
    });
  });
}
