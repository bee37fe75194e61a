import { randomBytes } from "node:crypto";
import { createUser, fromSeed } from "@nats-io/nkeys";
import { requireEnv } from "@ruststream/tooling-testkit";

const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url");

/**
 * A credentials file's text for a new user of the JWT server's account, named `name`: a user JWT
 * the account's seed signs, as an operator's tooling would. Synchronous (nkeys signs at once), so a
 * broker carrying it is built synchronously, as the credentials suite builds brokers.
 */
export function signedCreds(name: string): string {
  const account = fromSeed(new TextEncoder().encode(requireEnv("NATS_JWT_ACCOUNT_SEED")));
  const user = createUser();
  const header = base64url(JSON.stringify({ typ: "JWT", alg: "ed25519-nkey" }));
  const claims = base64url(
    JSON.stringify({
      jti: randomBytes(16).toString("hex").toUpperCase(),
      iat: Math.floor(Date.now() / 1000),
      iss: account.getPublicKey(),
      name,
      sub: user.getPublicKey(),
      nats: { pub: {}, sub: {}, subs: -1, data: -1, payload: -1, type: "user", version: 2 },
    }),
  );
  const signature = base64url(account.sign(new TextEncoder().encode(`${header}.${claims}`)));
  const jwt = `${header}.${claims}.${signature}`;
  const seed = new TextDecoder().decode(user.getSeed());
  return `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`;
}
