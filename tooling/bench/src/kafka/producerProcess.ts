import { type ChildProcess, fork } from "node:child_process";
import type { ProducerCommand, ProducerReply } from "./protocol.js";

/** The bench's handle on its producer process: one command at a time. */
export class ProducerProcess {
  readonly #child: ChildProcess;
  #waiting: ((reply: ProducerReply) => void) | undefined;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.on("message", (reply: ProducerReply) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.(reply);
    });
    child.on("exit", (code) => {
      this.#waiting?.({ kind: "failed", message: `the producer process exited (${code})` });
      this.#waiting = undefined;
    });
  }

  /** Forks producer.ts with the same loader flags (tsx) this process runs under. */
  static async start(brokers: string): Promise<ProducerProcess> {
    const child = fork(new URL("./producer.ts", import.meta.url), [brokers], {
      execArgv: process.execArgv.filter((flag) => !flag.startsWith("--cpu-prof")),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const producer = new ProducerProcess(child);
    await producer.#next();
    return producer;
  }

  #next(): Promise<ProducerReply> {
    return new Promise((resolve, reject) => {
      this.#waiting = (reply) => {
        if (reply.kind === "failed") reject(new Error(`producer process: ${reply.message}`));
        else resolve(reply);
      };
    });
  }

  /** A fresh topic of `count` orders; resolves when every record is written. */
  async fill(topic: string, partitions: number, count: number): Promise<number> {
    const answer = this.#next();
    this.#child.send({ kind: "fill", topic, partitions, count } satisfies ProducerCommand);
    const reply = await answer;
    return reply.kind === "filled" ? reply.ms : Number.NaN;
  }

  /** The group's lag on the topic, then the topic and the group deleted. */
  async finish(
    topic: string,
    group: string,
  ): Promise<Extract<ProducerReply, { kind: "finished" }>> {
    const answer = this.#next();
    this.#child.send({ kind: "finish", topic, group } satisfies ProducerCommand);
    const reply = await answer;
    if (reply.kind !== "finished") throw new Error(`producer process: answered ${reply.kind}`);
    return reply;
  }

  stop(): void {
    if (this.#child.connected) this.#child.send({ kind: "exit" } satisfies ProducerCommand);
  }
}
