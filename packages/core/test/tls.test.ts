import { describe, expect, it } from "vitest";
import { nodeTlsSettings, resolveTls } from "../src/tls.js";

// One TLS shape for every broker: read here once, then handed to each client library as it names
// the settings. The live TLS tests of Redis and Pulsar connect with it.

const ca = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
const cert = "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n";
const key = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";

describe("resolveTls", () => {
  it("true, or an address that asks for TLS, is TLS with the system's CAs; false or absent is none", () => {
    expect(resolveTls("tls", true)).toEqual({});
    expect(resolveTls("tls", undefined, true)).toEqual({});
    expect(resolveTls("tls", undefined)).toBeUndefined();
    expect(resolveTls("tls", false, true)).toBeUndefined();
  });

  it("reads PEM given as text or bytes, one CA or several, as text", () => {
    const bytes = new TextEncoder().encode(ca);
    expect(resolveTls("tls", { ca: bytes })).toEqual({ ca: [ca] });
    expect(resolveTls("tls", { ca: [ca, bytes], cert, key, keyPassword: "pw" })).toEqual({
      ca: [ca, ca],
      cert,
      key,
      keyPassword: "pw",
    });
  });

  it("names the setting this shape has for the one another client spells differently", () => {
    expect(() => resolveTls("tls", { rejectUnauthorized: false } as never)).toThrow(
      /tls\.rejectUnauthorized .* give verify: false/,
    );
    expect(() => resolveTls("sentinel.tls", { passphrase: "pw" } as never)).toThrow(
      /sentinel\.tls\.passphrase .* give keyPassword/,
    );
    expect(() => resolveTls("tls", { cafile: "x" } as never)).toThrow(
      /tls\.cafile is not a TLS setting: the settings are ca, cert, key/,
    );
  });

  it("refuses a path where PEM belongs, and half a client certificate", () => {
    expect(() => resolveTls("tls", { ca: "/etc/ssl/ca.pem" })).toThrow(
      /tls\.ca is not PEM .*readFileSync\(path\), not its path/,
    );
    expect(() => resolveTls("tls", { ca: [ca, 42] } as never)).toThrow(
      /tls\.ca\[1\]: give the PEM/,
    );
    expect(() => resolveTls("tls", { cert })).toThrow(/give both cert and key/);
    expect(() => resolveTls("tls", { keyPassword: "pw" })).toThrow(/give the key too/);
    expect(() => resolveTls("tls", "yes" as never)).toThrow(/give true .* or the settings/);
  });
});

describe("nodeTlsSettings", () => {
  it("names each setting as node:tls does, leaving absent ones absent", () => {
    expect(nodeTlsSettings({})).toEqual({});
    expect(
      nodeTlsSettings({ ca: [ca], cert, key, keyPassword: "pw", servername: "h", verify: false }),
    ).toEqual({
      ca: [ca],
      cert,
      key,
      passphrase: "pw",
      servername: "h",
      rejectUnauthorized: false,
    });
  });
});
