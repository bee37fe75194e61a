// @ts-check
// The installs the rehearsal makes, as users make them: the embedded default (core with the file
// broker) and each broker package alone, Kafka once per engine. Each names what it installs and how
// its services reach their broker; the brokers' own clients come from the packages' manifests.

/**
 * @typedef {{ id: string, broker: "file" | "redis" | "kafka" | "pulsar" | "nats" | "rabbitmq"
 *   | "postgres", install: string[],
 *   code: (folder: string) => import("./templates.mjs").BrokerCode, env?: NodeJS.ProcessEnv }} Scenario
 */

/** @type {Record<string, string>} */
const brokerModule = {
  file: "@ruststream/file",
  redis: "@ruststream/redis",
  kafka: "@ruststream/kafka",
  pulsar: "@ruststream/pulsar",
  nats: "@ruststream/nats",
  rabbitmq: "@ruststream/rabbitmq",
  postgres: "@ruststream/postgres",
};

/** The brokers that run on a server (tooling/brokers starts it): every one but the stream file. */
export const serverBrokers = Object.keys(brokerModule).filter((broker) => broker !== "file");

/**
 * @param {Record<string, import("./tarball.mjs").Published>} published by name
 * @param {NodeJS.ProcessEnv} brokers the addresses tooling/brokers exported
 * @returns {Scenario[]}
 */
export function scenarios(published, brokers) {
  const at = (/** @type {string} */ name) => {
    const pkg = published[name];
    if (pkg === undefined) throw new Error(`${name} was not published: nothing to install`);
    return `${name}@${pkg.version}`;
  };
  const peer = (/** @type {string} */ name, /** @type {string} */ client) =>
    `${client}@${published[name]?.manifest.peerDependencies?.[client] ?? "latest"}`;
  const kafka = (/** @type {"librdkafka" | "kafkajs"} */ engine) => ({
    module: brokerModule.kafka ?? "",
    className: "KafkaBroker",
    construct: `new KafkaBroker({ brokers: ${JSON.stringify(brokers.KAFKA_BROKERS)}, engine: "${engine}" })`,
  });
  return [
    {
      id: "file",
      broker: "file",
      install: [at("@ruststream/core"), at("@ruststream/file")],
      code: (folder) => ({
        module: "@ruststream/file",
        className: "FileBroker",
        construct: `new FileBroker({ path: ${JSON.stringify(`${folder}/data/rehearsal.ss`)}, consumer: "rehearsal" })`,
      }),
    },
    {
      id: "redis",
      broker: "redis",
      // ioredis comes as the package's own dependency.
      install: [at("@ruststream/core"), at("@ruststream/redis")],
      code: () => ({
        module: "@ruststream/redis",
        className: "RedisBroker",
        construct: `new RedisBroker({ url: ${JSON.stringify(brokers.REDIS_URL)}, group: "rehearsal" })`,
      }),
    },
    {
      id: "kafka-librdkafka",
      broker: "kafka",
      install: [
        at("@ruststream/core"),
        at("@ruststream/kafka"),
        peer("@ruststream/kafka", "@confluentinc/kafka-javascript"),
      ],
      code: () => kafka("librdkafka"),
      // Its install builds librdkafka against the system's libraries: the prebuilt binary's host is
      // not reachable from every machine (the project's test setup does the same).
      env: { CKJS_LINKING: process.env.CKJS_LINKING ?? "dynamic" },
    },
    {
      id: "kafka-kafkajs",
      broker: "kafka",
      install: [
        at("@ruststream/core"),
        at("@ruststream/kafka"),
        peer("@ruststream/kafka", "kafkajs"),
      ],
      code: () => kafka("kafkajs"),
    },
    {
      id: "pulsar",
      broker: "pulsar",
      install: [at("@ruststream/core"), at("@ruststream/pulsar")],
      code: () => ({
        module: "@ruststream/pulsar",
        className: "PulsarBroker",
        construct: `new PulsarBroker({ url: ${JSON.stringify(brokers.PULSAR_URL)} })`,
      }),
    },
    {
      id: "nats",
      broker: "nats",
      // Both clients are the package's peers: a user installs them beside it.
      install: [
        at("@ruststream/core"),
        at("@ruststream/nats"),
        peer("@ruststream/nats", "@nats-io/transport-node"),
        peer("@ruststream/nats", "@nats-io/jetstream"),
      ],
      code: () => ({
        module: "@ruststream/nats",
        className: "NatsBroker",
        construct: `new NatsBroker({ servers: ${JSON.stringify(brokers.NATS_URL)} })`,
      }),
    },
    {
      id: "rabbitmq",
      broker: "rabbitmq",
      // amqplib is the package's peer, at the range it names.
      install: [
        at("@ruststream/core"),
        at("@ruststream/rabbitmq"),
        peer("@ruststream/rabbitmq", "amqplib"),
      ],
      // `declare`: a bare name is a classic queue, declared at subscribe, so a publish to it
      // (mandatory, through the default exchange) has its queue to land in. The README's service
      // replies to "receipts", which it does not read: `topology` declares that queue at connect, as
      // examples/rabbitmq does (the same quorum queue), else the first reply is unroutable.
      code: () => ({
        module: "@ruststream/rabbitmq",
        className: "RabbitBroker",
        imports: ["RabbitQuorumQueue"],
        construct: `new RabbitBroker({ url: ${JSON.stringify(brokers.RABBITMQ_URL)}, declare: true, topology: [new RabbitQuorumQueue("receipts")] })`,
      }),
    },
    {
      id: "postgres",
      broker: "postgres",
      // pg is the package's peer, installed beside it at the peer's range. The services create the
      // queue table on the cluster tooling/brokers started, where it may already be.
      install: [
        at("@ruststream/core"),
        at("@ruststream/postgres"),
        peer("@ruststream/postgres", "pg"),
      ],
      code: () => ({
        module: "@ruststream/postgres",
        className: "PostgresBroker",
        construct: `new PostgresBroker({ url: ${JSON.stringify(brokers.POSTGRES_URL)}, ensureSchema: true })`,
      }),
    },
  ];
}

/**
 * Each broker package's clients: its dependencies and peers that are not @ruststream packages.
 * @param {Record<string, import("./tarball.mjs").Published>} published
 * @returns {Record<string, string[]>} by broker ("redis", "kafka", ...: each but the file broker)
 */
export function brokerClients(published) {
  /** @type {Record<string, string[]>} */
  const clients = {};
  for (const broker of serverBrokers) {
    const manifest = published[brokerModule[broker] ?? ""]?.manifest ?? {};
    clients[broker] = Object.keys({
      ...manifest.dependencies,
      ...manifest.peerDependencies,
    }).filter((name) => !name.startsWith("@ruststream/"));
  }
  return clients;
}

/**
 * The clients that must not be in a scenario's node_modules: every other broker's, and for Kafka the
 * other engine's (both are optional peers: installing one must not bring the other).
 * @param {Scenario} scenario
 * @param {Record<string, string[]>} clients
 */
export function foreignClients(scenario, clients) {
  const own = new Set(scenario.install.map((spec) => spec.replace(/(.)@.*$/, "$1")));
  return Object.entries(clients)
    .flatMap(([broker, names]) =>
      broker === scenario.broker ? names.filter(() => scenario.broker === "kafka") : names,
    )
    .filter((name) => !own.has(name));
}
