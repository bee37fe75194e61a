// @ts-check
// The test brokers' TLS: a CA of their own and a server certificate it signed for 127.0.0.1 and
// localhost, made with openssl once per folder and kept (a client trusts the CA file; nothing here
// ever guards more than a loopback port). Redis's and Pulsar's TLS ports use it, and so do tests
// that serve TLS themselves; a client certificate it signs logs a client in by its name (RabbitMQ's
// EXTERNAL mechanism).
import { randomBytes } from "node:crypto";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "./process.mjs";

/**
 * @typedef {{ ca: string, caKey: string, cert: string, key: string }} TestCertificates
 * Paths: the CA's certificate (what a client trusts) and key, the server's certificate and key.
 */

/**
 * Where the files of `dir` are; {@link ensureTestCertificates} makes them.
 * @param {string} dir
 * @returns {TestCertificates}
 */
export function testCertificates(dir) {
  return {
    ca: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    cert: join(dir, "server.crt"),
    key: join(dir, "server.key"),
  };
}

/**
 * Makes the CA and the server certificate in `dir` (an existing folder) unless they are there.
 * OpenSSL 3 writes PKCS#8 keys, which Redis's and Pulsar's TLS both read.
 * @param {string} dir
 * @param {string} caName the CA's common name, which says whose it is
 * @returns {Promise<TestCertificates>}
 */
export async function ensureTestCertificates(dir, caName) {
  const f = testCertificates(dir);
  if (existsSync(f.ca) && existsSync(f.cert) && existsSync(f.key)) return f;
  const ext = join(dir, "server.ext");
  writeFileSync(ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  const csr = join(dir, "server.csr");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "3650",
    "-subj",
    `/CN=${caName}`,
    "-keyout",
    f.caKey,
    "-out",
    f.ca,
  ]);
  await run("openssl", [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    f.key,
    "-out",
    csr,
  ]);
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    f.ca,
    "-CAkey",
    f.caKey,
    "-CAcreateserial",
    "-days",
    "3650",
    "-extfile",
    ext,
    "-out",
    f.cert,
  ]);
  return f;
}

/**
 * A client certificate the CA in `dir` (made by {@link ensureTestCertificates}) signs for
 * `commonName`, the name a server that logs clients in by certificate takes as the user's: made
 * unless it is there. Each has a random serial, so two made at once never share one.
 * @param {string} dir
 * @param {string} commonName letters, digits, `.`, `_` and `-`
 * @returns {Promise<{ cert: string, key: string }>} the paths of the certificate and its key
 */
export async function ensureClientCertificate(dir, commonName) {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(commonName)) {
    throw new Error(
      `a client certificate's name is 1-64 letters, digits, ".", "_" or "-": ${JSON.stringify(commonName)}`,
    );
  }
  const ca = testCertificates(dir);
  const files = {
    cert: join(dir, `client-${commonName}.crt`),
    key: join(dir, `client-${commonName}.key`),
  };
  if (existsSync(files.cert) && existsSync(files.key)) return files;
  const ext = join(dir, `client-${commonName}.ext`);
  const csr = join(dir, `client-${commonName}.csr`);
  writeFileSync(ext, "extendedKeyUsage=clientAuth\n");
  try {
    await run("openssl", [
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      `/CN=${commonName}`,
      "-keyout",
      files.key,
      "-out",
      csr,
    ]);
    await run("openssl", [
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      ca.ca,
      "-CAkey",
      ca.caKey,
      "-set_serial",
      `0x${randomBytes(16).toString("hex")}`,
      "-days",
      "3650",
      "-extfile",
      ext,
      "-out",
      files.cert,
    ]);
  } finally {
    rmSync(ext, { force: true });
    rmSync(csr, { force: true });
  }
  return files;
}
