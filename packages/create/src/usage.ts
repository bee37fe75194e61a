import { brokerNames } from "./brokers.js";

/** `--help`: how npm passes the arguments on, and every flag. */
export const usage = `Writes a new RustStream service: an app, its in-process test, a README.

  npm init @ruststream [<directory>] [-- <flags>]
  npx @ruststream/create [<directory>] [<flags>]

Flags (after npm init's own "--"):
  --broker, -b <name>   ${brokerNames.join(", ")} (asked when missing on a terminal)
  --engine <name>       Kafka's client: kafkajs (default) or librdkafka (also "confluent")
  --name <name>         the package name (default: the directory's name)
  --yes, -y             ask nothing: the defaults for what is not given (file, ruststream-service)
  --no-install          write the files only; do not install the dependencies
  --help, -h            this text
  --version, -v         the version, which the new project's @ruststream packages also get

Example:
  npm init @ruststream billing -- --broker kafka --yes
  cd billing && npm test
`;
