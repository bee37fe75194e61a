// One scenario, start to end: the broker side made ready, the replicas started, the load published
// while the seeded faults land, every message waited for, the replicas stopped, the checker run.
import { join } from "node:path";
import { type CheckResult, check, checkPerReplica, type Handled } from "../checker.js";
import { faultSchedule, type PlannedFault } from "../faults/schedule.js";
import type { NetworkFault, Toxiproxy } from "../faults/toxiproxy.js";
import { plannedMessages } from "../load.js";
import type { Profile } from "../profile.js";
import { scenarioSeed, seededRandom } from "../random.js";
import { failuresOf, type ScenarioReport } from "../report.js";
import { alwaysFails, type ServiceConfig } from "../service/config.js";
import { Replicas } from "../service/replicas.js";
import { type FaultRecord, longestPause, perSecond, recoveryAfter } from "../timeline.js";
import type { FaultKind, Scenario } from "./scenario.js";
import type { Target } from "./target.js";
import { targetOf } from "./targetOf.js";

export interface RunContext {
  readonly profile: Profile;
  readonly runSeed: number;
  /** The run's fault proxy, started when a scenario has network faults. */
  readonly toxiproxy: () => Promise<Toxiproxy>;
  readonly log: (line: string) => void;
  /** Where each scenario's replicas write their logs. */
  readonly logDir: string;
}

const sleepUntil = async (at: number): Promise<void> => {
  const wait = at - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
};

/**
 * How long the outputs may take to be read back once every input was handled: a transaction a
 * fault caught may wait 30 s for its commit and 30 s more for its abort (the Kafka package's
 * transaction timeouts) before its inputs are replayed, holding read_committed readers meanwhile.
 */
const OUTPUTS_TIMEOUT_MS = 90_000;

const networkFaults: ReadonlySet<FaultKind> = new Set(["latency", "cut", "stall", "bandwidth"]);
const isNetworkFault = (kind: FaultKind): kind is NetworkFault => networkFaults.has(kind);

export async function runScenario(
  scenario: Scenario,
  context: RunContext,
): Promise<ScenarioReport> {
  const { profile, log } = context;
  const seed = scenarioSeed(context.runSeed, scenario.name);
  const random = seededRandom(seed);
  const plan = faultSchedule(random, {
    kinds: scenario.faults,
    count: profile.faults,
    windowMs: profile.windowMs,
    minDurationMs: profile.minFaultMs,
    maxDurationMs: profile.maxFaultMs,
    replicas: scenario.replicas,
  });
  const messages = plannedMessages(random, profile.messages, profile.keys);
  // Unique per run, so a replayed seed never reads what an earlier run left.
  const key = `chaos-${scenario.name}-${seed}-${Date.now().toString(36)}`;
  const usesProxy = scenario.faults.some((kind) => networkFaults.has(kind));
  const proxy = usesProxy ? { toxiproxy: await context.toxiproxy(), name: key } : undefined;
  const group = `chaos-${scenario.name}`;
  const logFile = join(
    context.logDir,
    `${profile.name}-seed${context.runSeed}-${scenario.name}.log`,
  );
  const handled: Handled[] = [];
  const target = await targetOf(scenario, {
    key,
    seed,
    group,
    messages,
    logFile,
    handled,
    truncations: plan.filter((f) => f.kind === "truncate").length,
    proxy,
    log,
  });
  const config: ServiceConfig = {
    broker: scenario.broker,
    address: target.serviceAddress,
    key,
    group,
    workMs: profile.workMs,
    ...(scenario.retry === undefined
      ? {}
      : { retry: { ...scenario.retry, deadLetter: `${key}.dlq` } }),
    ...(scenario.keyOrder === undefined ? {} : { keyOrder: scenario.keyOrder }),
    ...(scenario.transactional === undefined ? {} : { transactional: scenario.transactional }),
  };
  log(
    `[chaos] ${scenario.name}: seed ${seed}, ${messages.length} messages, faults ${plan.map((f) => `${f.kind}@${f.atMs}`).join(" ")}`,
  );

  const handledAt: number[] = [];
  const deadLetters = new Map<number, Set<string>>();
  let started = performance.now();
  const onLine = (line: string, replica: number): void => {
    // The fourth field: a handling's time (`h`), a dead letter's write (`d`); a handling's fifth,
    // its attempt.
    const [kind, k, s, position, attempt] = line.split(" ");
    const seq = Number(s);
    if (k === undefined || !Number.isSafeInteger(seq)) {
      log(`[chaos] ${scenario.name}: unexpected service output: ${line}`);
      return;
    }
    if (kind === "h") {
      handled.push({ key: k, seq, at: Number(position), attempt: Number(attempt), replica });
      handledAt.push(performance.now() - started);
    } else if (kind === "d") {
      const positions = deadLetters.get(seq) ?? new Set<string>();
      positions.add(position ?? "");
      deadLetters.set(seq, positions);
      handledAt.push(performance.now() - started);
    }
  };
  const replicas = new Replicas(scenario.replicas, config, logFile, onLine);
  const faults: Omit<FaultRecord, "recoveryMs">[] = [];
  let verdict: { failures: string[]; notes: string[] } | undefined;
  let outputs: (CheckResult & { read: number }) | undefined;
  try {
    if (target.publishBeforeStart) await target.publishAll(messages, 0, log);
    await replicas.startAll();
    started = performance.now();
    const injecting = (async () => {
      for (const fault of plan) {
        await sleepUntil(started + fault.atMs);
        await target.beforeFault?.(fault);
        faults.push(await inject(fault, { replicas, target, proxy, started }));
        await target.afterFault?.();
      }
    })();
    const publishing = target.publishBeforeStart
      ? Promise.resolve()
      : target.publishAll(messages, profile.windowMs, log);
    await Promise.all([injecting, publishing]);
    await waitForAll(
      messages.length,
      scenario.fanOut === undefined ? undefined : scenario.replicas,
      handled,
      deadLetters,
      profile.drainTimeoutMs,
      (replica) => target.removedByFault?.(replica),
    );
    // A little longer, so a late redelivery shows up as the duplicate it is.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (target.outputs !== undefined) {
      // Each output exactly once, in its key's order: what an exactly-once mode promises of them.
      const read = await target.outputs(messages.length, OUTPUTS_TIMEOUT_MS);
      outputs = { ...check(messages, read, { orderPerKey: true }), read: read.length };
    }
  } finally {
    await target.beforeStop?.();
    const codes = await replicas.stopAll(15_000);
    if (codes.some((code) => code !== 0 && code !== null)) {
      log(
        `[chaos] ${scenario.name}: replicas exited with ${codes.join(", ")}; their logs: ${logFile}`,
      );
    }
    try {
      verdict = await target.verdict?.();
    } finally {
      // Whatever the verdict, the target's own resources (a mounted disk) go.
      await target.cleanup();
    }
  }
  const wallMs = performance.now() - started;
  const settledElsewhere = (replica?: number): ReadonlySet<number> =>
    new Set([...deadLetters.keys(), ...(target.removedByFault?.(replica) ?? [])]);
  const result =
    scenario.fanOut === undefined
      ? check(messages, handled, {
          orderPerKey: scenario.orderPerKey,
          settledElsewhere: settledElsewhere(),
        })
      : checkPerReplica(messages, handled, scenario.replicas, {
          orderPerKey: scenario.orderPerKey,
          settledElsewhere,
        });
  // Under a fan-out, summed over the replicas: each replica's messages a fault took from it.
  const removed =
    target.removedByFault === undefined
      ? undefined
      : scenario.fanOut === undefined
        ? target.removedByFault().size
        : Array.from(
            { length: scenario.replicas },
            (_, r) => target.removedByFault?.(r).size ?? 0,
          ).reduce((a, b) => a + b, 0);
  const times = [...handledAt].sort((a, b) => a - b);
  const retry = config.retry;
  const offPlan =
    retry === undefined
      ? 0
      : [...deadLetters.keys()].filter((seq) => !alwaysFails(retry, seq)).length;
  const partial = {
    scenario: scenario.name,
    seed,
    messages: result.messages,
    lost: result.lost,
    duplicated: result.duplicated,
    duplicateBound: (faults.length + 1) * scenario.inFlightPerReplica * scenario.replicas,
    reordered: result.reordered,
    orderPerKey: scenario.orderPerKey,
    unexpected: result.unexpected,
    ...(retry === undefined
      ? {}
      : {
          deadLettered: deadLetters.size,
          deadLetteredTwice: [...deadLetters.values()].filter((p) => p.size > 1).length,
          ...(scenario.deadLettersTwicePerFault === undefined
            ? {}
            : { deadLetteredTwiceBound: faults.length * scenario.deadLettersTwicePerFault }),
          ...(scenario.capCountsHandlerRunsOnly === true ? { deadLetteredOffPlan: offPlan } : {}),
        }),
    ...(removed === undefined ? {} : { removedByFault: removed }),
    lostSample: result.lostSample,
    ...(outputs === undefined
      ? {}
      : {
          outputs: {
            read: outputs.read,
            lost: outputs.lost,
            duplicated: outputs.duplicated,
            reordered: outputs.reordered,
            unexpected: outputs.unexpected,
            lostSample: outputs.lostSample,
          },
        }),
    faults: faults.map((f) => ({ ...f, recoveryMs: recoveryAfter(times, f.healedMs) })),
    longestPauseMs: longestPause(times),
    perSecond: perSecond(times),
    wallMs,
  };
  // Which dead letters came twice, and from which writes: a second write's process and counter
  // (or the server's x-death record) say where to look.
  const twice = [...deadLetters]
    .filter(([, writes]) => writes.size > 1)
    .slice(0, 10)
    .map(([seq, writes]) => `dead-lettered twice: seq ${seq} (writes ${[...writes].join(", ")})`);
  const notes = [...(verdict?.notes ?? []), ...twice];
  if (offPlan > 0 && scenario.capCountsHandlerRunsOnly !== true) {
    notes.push(
      `${offPlan} dead-lettered that the plan never fails (the cap counts deliveries: a fault's took an attempt)`,
    );
  }
  return {
    ...partial,
    ...(notes.length === 0 ? {} : { notes }),
    failures: [...failuresOf(partial), ...(verdict?.failures ?? [])],
  };
}

/**
 * Until every message was handled, dead-lettered or removed by a fault, or the timeout; under a
 * fan-out of `fanOut` replicas, by each of them.
 */
async function waitForAll(
  total: number,
  fanOut: number | undefined,
  handled: readonly Handled[],
  deadLetters: ReadonlyMap<number, unknown>,
  timeoutMs: number,
  removed: (replica?: number) => ReadonlySet<number> | undefined,
): Promise<void> {
  const views = fanOut === undefined ? [undefined] : Array.from({ length: fanOut }, (_, r) => r);
  const complete = (replica: number | undefined): boolean => {
    const done = new Set(
      handled.filter((h) => replica === undefined || h.replica === replica).map((h) => h.seq),
    );
    for (const seq of deadLetters.keys()) done.add(seq);
    for (const seq of removed(replica) ?? []) done.add(seq);
    return done.size >= total;
  };
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (views.every(complete)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

interface FaultTargets {
  readonly replicas: Replicas;
  readonly target: Target;
  readonly proxy: { toxiproxy: Toxiproxy; name: string } | undefined;
  readonly started: number;
}

async function inject(
  fault: PlannedFault<FaultKind>,
  { replicas, target, proxy, started }: FaultTargets,
): Promise<Omit<FaultRecord, "recoveryMs">> {
  const atMs = performance.now() - started;
  const hold = () => new Promise<void>((resolve) => setTimeout(resolve, fault.durationMs));
  let what: string;
  const own = target.ownFaults?.[fault.kind];
  if (own !== undefined) {
    const landed = await own(fault, { hold, replicas });
    return {
      kind: fault.kind,
      target: landed.target,
      atMs: landed.landedAt === undefined ? atMs : landed.landedAt - started,
      healedMs: performance.now() - started,
    };
  }
  if (fault.kind === "kill") {
    what = `replica ${fault.replica}`;
    await replicas.kill(fault.replica);
    await hold();
    await replicas.start(fault.replica);
  } else if (fault.kind === "broker-restart") {
    if (target.restartBroker === undefined) throw new Error("this broker has no restart fault");
    what = "broker";
    await target.restartBroker();
  } else if (isNetworkFault(fault.kind)) {
    if (proxy === undefined) throw new Error(`a ${fault.kind} fault needs the fault proxy`);
    what = "proxy";
    await proxy.toxiproxy.inject(proxy.name, fault.kind);
    await hold();
    await proxy.toxiproxy.heal(proxy.name, fault.kind);
  } else {
    throw new Error(`this scenario's broker has no ${fault.kind} fault`);
  }
  return { kind: fault.kind, target: what, atMs, healedMs: performance.now() - started };
}
