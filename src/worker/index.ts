export { WorkflowExecution } from "../actors/workflow-execution";
export default {
  async fetch(): Promise<Response> {
    return Response.json({ status: "ok" });
  },
} satisfies ExportedHandler<Env>;
