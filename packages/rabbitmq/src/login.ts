// What a url says of who logs in and where, as the server reads it: read by the options (to check a
// url where the broker is built) and by the client (to log in, and to name both in a refusal).

/**
 * How the client logs in: `PLAIN` with the url's user and password, or `EXTERNAL` with its TLS
 * client certificate, the server naming the user from the certificate.
 */
export type RabbitAuthMechanism = "PLAIN" | "EXTERNAL";

/** The vhost a url names, as the server reads it: the path's segment decoded, `/` when empty. */
export function vhostOf(url: URL): string {
  const segment = url.pathname.slice(1);
  return segment === "" ? "/" : decodeURIComponent(segment);
}

/**
 * The user and password a url names, decoded as UTF-8 (`%C3%A9` is "é"); guest's when it names
 * neither, as amqplib does.
 */
export function loginOf(url: URL): { readonly user: string; readonly password: string } {
  if (url.username === "" && url.password === "") return { user: "guest", password: "guest" };
  return { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}
