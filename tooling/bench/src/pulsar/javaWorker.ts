// The Java rows' process: java/PulsarBenchWorker.java compiled with javac against the jars
// tooling/brokers resolved (PULSAR_LIBS, Pulsar 4.0.7's client among them) and kept running for the
// whole bench, one command at a time over stdin/stdout, so the JVM is as warm in every round as the
// Node process it is compared with.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { orderTemplate } from "./order.js";

/** What the worker answers for a command: the same shape the Node rows measure. */
export interface JavaAnswer {
  readonly messages: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** Consume only: the sum of the order numbers read. */
  readonly idSum?: string;
}

const source = fileURLToPath(new URL("./java/PulsarBenchWorker.java", import.meta.url));
const classes = fileURLToPath(new URL("../../.cache/bench-pulsar-java/", import.meta.url));

function pulsarLibs(): string {
  const libs = process.env.PULSAR_LIBS;
  if (libs === undefined || !existsSync(join(libs, "pulsar-client-original-4.0.7.jar"))) {
    throw new Error(
      `PULSAR_LIBS (${libs ?? "unset"}) does not hold pulsar-client-original-4.0.7.jar: run \`pnpm brokers up pulsar\`, which resolves the jars and exports it (the bench calls ensureBrokers(["pulsar"]) first)`,
    );
  }
  return libs;
}

export class JavaWorker {
  readonly #child: ChildProcess;
  readonly #lines: AsyncIterator<string>;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  /** Compiles the worker (javac) and starts it with a small heap; resolves once it is listening. */
  static async start(serviceUrl: string): Promise<JavaWorker> {
    const classpath = `${pulsarLibs()}/*`;
    mkdirSync(classes, { recursive: true });
    execFileSync("javac", ["-cp", classpath, "-d", classes, source], { stdio: "inherit" });
    const child = spawn(
      "java",
      [
        "-Xms128m",
        "-Xmx512m",
        "-cp",
        `${classes}:${classpath}`,
        "PulsarBenchWorker",
        serviceUrl,
        orderTemplate.toString("base64"),
      ],
      // The client's own logging goes to stderr and is dropped; stdout carries the answers.
      { stdio: ["pipe", "pipe", "ignore"] },
    );
    const worker = new JavaWorker(child);
    await worker.#answer();
    return worker;
  }

  /** The JVM's process id: its resident memory is read per row (../rows/livePeak.ts). */
  get pid(): number {
    return this.#child.pid!;
  }

  /** The next JSON line the worker prints (log lines on stdout, if any, are skipped). */
  async #answer(): Promise<Record<string, unknown>> {
    for (;;) {
      const next = await this.#lines.next();
      if (next.done === true) throw new Error("the Java worker exited");
      if (!next.value.startsWith("{")) continue;
      const answer = JSON.parse(next.value) as Record<string, unknown>;
      if (typeof answer.error === "string") throw new Error(`Java worker: ${answer.error}`);
      return answer;
    }
  }

  async #run(command: string): Promise<JavaAnswer> {
    this.#child.stdin!.write(`${command}\n`);
    return (await this.#answer()) as unknown as JavaAnswer;
  }

  /** Sends `count` orders (numbers 0..count-1) with at most `window` unconfirmed. */
  produce(topic: string, count: number, window: number): Promise<JavaAnswer> {
    return this.#run(`produce ${topic} ${count} ${window}`);
  }

  /** Drains `count` orders from the Shared subscription, acking each. */
  consume(topic: string, subscription: string, count: number): Promise<JavaAnswer> {
    return this.#run(`consume ${topic} ${subscription} ${count}`);
  }

  stop(): void {
    this.#child.stdin!.end();
  }
}
