import { TASK_TYPES, type TaskType } from "../../model";

/**
 * The types a FORK_JOIN_DYNAMIC can fork: a branch is one task, so not a fork or a JOIN, which come in pairs (a SWITCH
 * forked may hold a FORK_JOIN and its JOIN in a branch). Nor another FORK_JOIN_DYNAMIC, at any depth: fork a
 * SUB_WORKFLOW whose definition holds one. Nor an UPDATE_SECRET: writing a secret is a right checked when a definition
 * holding one is registered, and forked tasks are known only as the workflow runs.
 */
export const FORKABLE_TYPES: readonly TaskType[] = TASK_TYPES.filter((type) => type !== "FORK_JOIN" && type !== "CONDITIONAL_FORK" && type !== "JOIN" && type !== "FORK_JOIN_DYNAMIC" && type !== "UPDATE_SECRET");
