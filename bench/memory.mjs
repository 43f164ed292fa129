// @ts-check
/**
 * Peak proportional set size (PSS) of a whole process tree, sampled from /proc (Linux only).
 *
 * PSS of one process = the `Pss:` line of `/proc/<pid>/smaps_rollup` (kB). The tree is found by
 * walking the parent links in `/proc/<pid>/stat` from the root pid, again at every sample, so
 * processes started later (workerd) are included.
 */
import { readdirSync, readFileSync } from "node:fs";

/**
 * Parent pid of every live process.
 * @returns {Map<number, number>} pid → ppid
 */
export function parentLinks() {
  /** @type {Map<number, number>} */
  const links = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      links.set(Number(name), Number(fields[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  return links;
}

/**
 * The root pid and all its descendants.
 * @param {number} rootPid
 * @returns {number[]}
 */
export function treePids(rootPid) {
  const links = parentLinks();
  /** @type {Map<number, number[]>} */
  const children = new Map();
  for (const [pid, ppid] of links) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  if (!links.has(rootPid)) return [];
  const out = [rootPid];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]) ?? []));
  return out;
}

/**
 * PSS of one process in kB, or 0 when it is gone or unreadable.
 * @param {number} pid
 * @returns {number}
 */
export function pssKb(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    let total = 0;
    for (const match of text.matchAll(/^Pss:\s+(\d+) kB$/gm)) total += Number(match[1]);
    return total;
  } catch {
    return 0;
  }
}

/**
 * Short name of a process (`comm`), for reports.
 * @param {number} pid
 */
export function commOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/**
 * One sample: the tree's total PSS and its parts.
 * @param {number} rootPid
 * @returns {{ totalKb: number, parts: { pid: number, comm: string, pssKb: number }[] }}
 */
export function sampleTree(rootPid) {
  const parts = treePids(rootPid).map((pid) => ({ pid, comm: commOf(pid), pssKb: pssKb(pid) }));
  return { totalKb: parts.reduce((sum, p) => sum + p.pssKb, 0), parts };
}

/**
 * @typedef {object} MemoryReport
 * @property {number} peakKb highest total PSS of the tree over all samples
 * @property {{ pid: number, comm: string, pssKb: number }[]} peakParts the tree at that peak
 * @property {number} samples number of samples taken
 */

/**
 * Samples the tree every `intervalMs` until `stop()` is called.
 * @param {number} rootPid
 * @param {number} [intervalMs]
 * @returns {{ stop: () => MemoryReport, peek: () => MemoryReport }}
 */
export function startPssSampler(rootPid, intervalMs = 250) {
  /** @type {MemoryReport} */
  const report = { peakKb: 0, peakParts: [], samples: 0 };
  const take = () => {
    const { totalKb, parts } = sampleTree(rootPid);
    if (parts.length === 0) return;
    report.samples += 1;
    if (totalKb > report.peakKb) {
      report.peakKb = totalKb;
      report.peakParts = parts;
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  timer.unref();
  return {
    peek: () => ({ ...report }),
    stop: () => {
      clearInterval(timer);
      take();
      return { ...report };
    },
  };
}
