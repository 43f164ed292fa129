import { DurableObject } from "cloudflare:workers";
export class WorkflowExecution extends DurableObject<Env> {
  ping(): string {
    return "pong";
  }
}
