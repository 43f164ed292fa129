// @ts-check
/**
 * How much CPU other processes took while the benchmark measured (Linux /proc), so a run disturbed by
 * something else on the machine (another wrangler, a test suite) can be told apart from a slow engine.
 */
import { readdirSync, readFileSync } from "node:fs";
import { commOf } from "./memory.mjs";

/** @returns {number} busy jiffies of the whole machine (all cores) */
function machineBusy() {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
  // cpu user nice system idle iowait irq softirq steal ... (irq/softirq left out: loopback traffic of our
  // own processes lands there and is not charged to any process)
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  return (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0);
}

/**
 * utime + stime (+ reaped children's) of one process in jiffies, 0 when gone.
 * @param {number} pid
 */
function processBusy(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number);
    // fields after comm start at "state" (field 3): utime = field 14, stime 15, cutime 16, cstime 17
    return (f[11] ?? 0) + (f[12] ?? 0) + (f[13] ?? 0) + (f[14] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * CPU time (user + system) the processes `pids` have used so far, in ms: the difference over a phase, divided by
 * its workflows, is the CPU each workflow cost them, which varies much less than the wall time on a shared machine.
 * @param {number[]} pids
 */
export function busyMs(pids) {
  let jiffies = 0;
  for (const pid of pids) jiffies += processBusy(pid);
  return jiffies * 10; // USER_HZ is 100 on Linux
}

/**
 * @typedef {object} CpuSnapshot
 * @property {number} at performance.now()
 * @property {number} machine busy jiffies, whole machine
 * @property {number} ours busy jiffies of our processes
 * @property {Map<number, number>} others busy jiffies of every other process
 */

/**
 * @param {() => number[]} ourPids the benchmark's processes (runner, target, engine tree)
 * @returns {CpuSnapshot}
 */
export function cpuSnapshot(ourPids) {
  const pids = new Set(ourPids());
  let ours = 0;
  for (const pid of pids) ours += processBusy(pid);
  /** @type {Map<number, number>} */
  const others = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || pids.has(Number(name))) continue;
    others.set(Number(name), processBusy(Number(name)));
  }
  return { at: performance.now(), machine: machineBusy(), ours, others };
}

/**
 * The other processes that used the most CPU between two snapshots (those alive at both).
 * @param {CpuSnapshot} from
 * @param {CpuSnapshot} to
 * @param {number} [top]
 * @returns {{ pid: number, comm: string, cores: number }[]}
 */
export function busiestOthers(from, to, top = 3) {
  const seconds = (to.at - from.at) / 1000;
  return [...to.others]
    .map(([pid, busy]) => ({ pid, comm: commOf(pid), cores: (busy - (from.others.get(pid) ?? busy)) / 100 / seconds }))
    .filter((p) => p.cores > 0.01)
    .sort((a, b) => b.cores - a.cores)
    .slice(0, top);
}

/**
 * CPU taken by processes other than ours between two snapshots, in cores (1.0 = one core fully busy).
 * @param {CpuSnapshot} from
 * @param {CpuSnapshot} to
 */
export function otherCores(from, to) {
  const hz = 100; // USER_HZ is 100 on Linux
  const seconds = (to.at - from.at) / 1000;
  if (seconds <= 0) return 0;
  const other = Math.max(0, to.machine - from.machine - (to.ours - from.ours));
  return other / hz / seconds;
}
