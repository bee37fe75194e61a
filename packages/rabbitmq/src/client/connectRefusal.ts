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
  if (/SASL mechanism EXTERNAL is not provided/.test(words)) {
    return new ConnectRefused(
      `RabbitMQ does not offer the EXTERNAL mechanism here (${words}): connect to the node's TLS listener (amqps://) with a client certificate (tls: { cert, key }); the node needs the rabbitmq_auth_mechanism_ssl plugin and EXTERNAL in its auth_mechanisms`,
      true,
      error,
    );
  }
  if (/ACCESS_REFUSED|\b403\b/.test(words)) {
    return new ConnectRefused(
      mechanism === "EXTERNAL"
        ? `RabbitMQ refused the login by client certificate (${words}): the node must trust the certificate's CA, and a user must exist named as the node's ssl_cert_login_from reads the certificate (its common name, or by default its distinguished name)`
        : `RabbitMQ refused the login of user "${user}" (${words}): check the url's user and password`,
      true,
      error,
    );
  }
  return new ConnectRefused(words, false, error);
}
