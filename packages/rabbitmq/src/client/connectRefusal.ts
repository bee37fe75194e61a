import { loginOf, type RabbitAuthMechanism, vhostOf } from "../login.js";
import { refusalOf } from "./serverError.js";

/**
 * A node's refusal of a connection, in words that name the user, the vhost and the fix. `login`: a
 * refusal of who the client is or where it asked to go, which retrying does not fix.
 */
export class ConnectRefused extends Error {
  readonly login: boolean;

  constructor(message: string, login: boolean, cause: unknown) {
    super(message, { cause });
    this.name = "ConnectRefused";
    this.login = login;
  }
}

/** What amqplib's error on connecting to `url` means, as a {@link ConnectRefused}. */
export function connectRefusal(
  error: unknown,
  url: string,
  mechanism: RabbitAuthMechanism,
): ConnectRefused {
  const words = refusalOf(error).text;
  const parsed = new URL(url);
  const vhost = vhostOf(parsed);
  const { user } = loginOf(parsed);
  const who = mechanism === "EXTERNAL" ? "the user the client certificate names" : `user "${user}"`;
  const grantee = mechanism === "EXTERNAL" ? "<the certificate's user>" : user;
  // The server closes the connection at connection.open, naming why; amqplib keeps only that it
  // closed (`Expected ConnectionOpenOk; got <ConnectionClose channel:0>`).
  if (/Expected ConnectionOpenOk; got <ConnectionClose/.test(words)) {
    return new ConnectRefused(
      `RabbitMQ refused ${who} the vhost "${vhost}": it does not exist, the user has no permissions on it, or a connection limit is reached (amqplib does not pass on the server's words). Create it (rabbitmqctl add_vhost '${vhost}'), grant the user access (rabbitmqctl set_permissions -p '${vhost}' '${grantee}' '.*' '.*' '.*'), or fix the url's path (the vhost percent-encoded: /%2F for "/")`,
      true,
      error,
    );
  }
  // A plain listener answers a TLS hello with AMQP's protocol header, which is no TLS record.
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "ERR_SSL_PACKET_LENGTH_TOO_LONG") {
    const otherFix =
      mechanism === "EXTERNAL"
        ? "EXTERNAL logs in only over TLS, with the client certificate"
        : "or leave tls out for its plain listener (tls turns TLS on even for an amqp:// url)";
    return new ConnectRefused(
      `the port did not answer in TLS (${code}), as a plain AMQP listener does not: connect to the node's TLS listener (amqps://, port 5671 by default); ${otherFix}`,
      false,
      error,
    );
  }
  // An alert the node sent in the handshake about the client's certificate (OpenSSL's codes: a CA
  // it does not trust is `bad certificate` from RabbitMQ, `unknown CA` from others).
  if (
    typeof code === "string" &&
    /^ERR_SSL_.*ALERT_(BAD|UNSUPPORTED|UNKNOWN_CA|CERTIFICATE)/.test(code)
  ) {
    return new ConnectRefused(
      `RabbitMQ refused the client certificate in the TLS handshake (${code}): it must chain to a CA in the node's ssl_options.cacertfile and be current, and be given (tls: { cert, key }) where the node's listener requires one (ssl_options.fail_if_no_peer_cert)`,
      true,
      error,
    );
  }
  // amqplib gives up at connection.start without keeping the mechanisms the node offered. The node
  // offers EXTERNAL on a connection it ends TLS on itself (with or without a client certificate),
  // never on a plain one: here the plugin is off, EXTERNAL is not in its auth_mechanisms, or a
  // proxy in between ended TLS and speaks plain AMQP to it.
  if (/SASL mechanism EXTERNAL is not provided/.test(words)) {
    return new ConnectRefused(
      `RabbitMQ does not offer the EXTERNAL mechanism on this connection (${words}): it offers it only on a TLS connection it ends itself, so connect to the node's TLS listener (amqps://) directly, not through a proxy that ends TLS, with a client certificate (tls: { cert, key }); the node needs the rabbitmq_auth_mechanism_ssl plugin enabled and EXTERNAL in its auth_mechanisms`,
      true,
      error,
    );
  }
  // The node keeps its reason to its log: for EXTERNAL, no user of the certificate's name, or no
  // certificate at all (a listener that does not ask for one, a proxy that ended TLS and opened
  // TLS of its own). A certificate it does not trust fails the TLS handshake before this.
  if (/ACCESS_REFUSED|\b403\b/.test(words)) {
    return new ConnectRefused(
      mechanism === "EXTERNAL"
        ? `RabbitMQ refused the login by client certificate (${words}): a user must exist named as the node's ssl_cert_login_from reads the certificate (its common name, or by default its distinguished name), and the certificate must reach the node: its TLS listener asks for it (ssl_options.verify = verify_peer) and nothing in between ends TLS`
        : `RabbitMQ refused the login of user "${user}" (${words}): check the url's user and password`,
      true,
      error,
    );
  }
  return new ConnectRefused(words, false, error);
}
