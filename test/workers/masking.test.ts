/**
 * Orkes' masked parameters: values under `_secrets` and `_masked` keys are shown as *** by the API (executions, tasks,
 * search), while the execution uses the real ones: the worker that polls gets them, and an HTTP task sends them.
 * Through the real router, objects and D1, and a real HTTP server.
 */
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { apiOk, eventually, hits, httpTask, register, startWorkflow, target, waitFor, waitForIndexRow } from "./helpers";

describe("masked parameters", () => {
  it("shows _secrets and _masked values as *** everywhere the API shows them, while the worker and the request get the real ones", async () => {
    await register({
      name: "mask_flow",
      tasks: [
        { name: "mask_worker", taskReferenceName: "work", type: "SIMPLE", inputParameters: { _secrets: { token: "${workflow.input._secrets.token}" }, user: "${workflow.input.user}" } },
        // The card in the path too, where nothing masks it: the target counts the request under the real value.
        httpTask("send", { uri: target("/count/mask-${work.output._masked.card}"), method: "POST", body: { _secrets: { card: "${work.output._masked.card}" }, user: "${workflow.input.user}" } }),
      ],
      outputParameters: { token: "${workflow.input._secrets}", ok: "${work.output.ok}" },
    });
    const workflowId = await startWorkflow("mask_flow", { user: "ann", _secrets: { token: "t0p-s3cret" } });

    const polled = await eventually(() => apiOk<JsonObject[]>("GET", "/api/tasks/poll/batch/mask_worker?workerid=w&count=1&timeout=0"), (tasks) => tasks.length > 0, "the worker's task");
    expect(polled[0]!["inputData"]).toEqual({ _secrets: { token: "t0p-s3cret" }, user: "ann" });
    await apiOk("POST", "/api/tasks", { workflowInstanceId: workflowId, taskId: polled[0]!["taskId"], status: "COMPLETED", outputData: { _masked: { card: "4111-1111" }, ok: true } });

    const done = await waitFor(workflowId, ["COMPLETED"]);
    expect(await hits("mask-4111-1111")).toBe(1);
    const [work, send] = done.tasks;
    expect(done.input).toEqual({ user: "ann", _secrets: "***" });
    expect(work!.inputData).toEqual({ _secrets: "***", user: "ann" });
    expect(work!.outputData).toEqual({ _masked: "***", ok: true });
    expect((send!.inputData["body"] as JsonObject)["_secrets"]).toBe("***");
    // Masking goes by key: a key of another name shows what it was given (here the secrets object itself).
    expect(done.output).toEqual({ token: { token: "t0p-s3cret" }, ok: true });
    expect(JSON.stringify(done.tasks)).not.toContain("t0p-s3cret");
    expect(JSON.stringify(done.input)).not.toContain("t0p-s3cret");

    await waitForIndexRow(workflowId, "COMPLETED");
    const found = await apiOk<{ results: Array<{ input: string }> }>("GET", `/api/workflow/search?query=${encodeURIComponent(`workflowId = '${workflowId}'`)}`);
    expect(JSON.parse(found.results[0]!.input)).toEqual({ user: "ann", _secrets: "***" });
    const tasks = await apiOk<{ results: Array<{ input: string; output: string }> }>("GET", `/api/tasks/search?query=${encodeURIComponent(`workflowId = '${workflowId}'`)}`);
    expect(JSON.stringify(tasks)).not.toContain("t0p-s3cret");
    expect(tasks.results.map((row) => JSON.parse(row.output) as JsonObject).find((output) => "ok" in output)).toEqual({ _masked: "***", ok: true });
  });

  it("shows the fields a definition's maskedFields names as *** too, in executions, tasks and search, while the request gets them", async () => {
    await register({
      name: "mask_fields_flow",
      maskedFields: ["ssn"],
      tasks: [httpTask("send", { uri: target("/count/mask-fields-${workflow.input.ssn}"), method: "POST", body: { ssn: "${workflow.input.ssn}", name: "${workflow.input.name}" } })],
      outputParameters: { ssn: "${workflow.input.ssn}" },
    });
    expect((await apiOk<JsonObject>("GET", "/api/metadata/workflow/mask_fields_flow"))["maskedFields"]).toEqual(["ssn"]);
    const workflowId = await startWorkflow("mask_fields_flow", { name: "ann", ssn: "123456789" });
    const done = await waitFor(workflowId, ["COMPLETED"]);
    expect(await hits("mask-fields-123456789")).toBe(1);
    expect(done.input).toEqual({ name: "ann", ssn: "***" });
    expect(done.output).toEqual({ ssn: "***" });
    expect((done.tasks[0]!.inputData["body"] as JsonObject)).toEqual({ ssn: "***", name: "ann" });
    await waitForIndexRow(workflowId, "COMPLETED");
    const found = await apiOk<{ results: Array<{ input: string; output: string }> }>("GET", `/api/workflow/search?query=${encodeURIComponent(`workflowId = '${workflowId}'`)}`);
    expect(JSON.parse(found.results[0]!.input)).toEqual({ name: "ann", ssn: "***" });
    expect(JSON.parse(found.results[0]!.output)).toEqual({ ssn: "***" });
    const tasks = await apiOk<{ results: Array<{ input: string }> }>("GET", `/api/tasks/search?query=${encodeURIComponent(`workflowId = '${workflowId}'`)}`);
    expect((JSON.parse(tasks.results[0]!.input) as JsonObject)["body"]).toEqual({ ssn: "***", name: "ann" });
  });

  it("a nested ${…} neither reaches a masked field by a name its data supplies nor shows what it wrote in from one", async () => {
    await register({
      name: "mask_nested_flow",
      maskedFields: ["ssn"],
      tasks: [
        httpTask("send", {
          uri: target("/echo/mask-nested"),
          method: "POST",
          body: {
            byDataName: "${workflow.input.person.${workflow.input.field}}",
            byWrittenName: "${workflow.input.person.${workflow.input.other}}",
            indexedByMasked: "${workflow.input.codes[${workflow.input.ssn}]}",
          },
        }),
      ],
    });
    const input = { ssn: 1, field: "ssn", other: "name", person: { ssn: "123456789", name: "ann" }, codes: ["a", "b"] };
    const done = await waitFor(await startWorkflow("mask_nested_flow", input), ["COMPLETED"]);
    expect(done.tasks[0]!.inputData["body"]).toEqual({ byDataName: null, byWrittenName: "ann", indexedByMasked: "***" });
    expect(JSON.stringify(done.tasks)).not.toContain("123456789");
  });

  it("a script that fails quoting a masked value shows *** in its reason, whole or the part it quoted", async () => {
    await register({
      name: "mask_script_flow",
      maskedFields: ["ssn"],
      tasks: [
        { name: "parse", taskReferenceName: "parse", type: "INLINE", inputParameters: { evaluatorType: "javascript", token: "${workflow.input._secrets.token}", expression: "JSON.parse($.token)" } },
      ],
    });
    const parsed = await waitFor(await startWorkflow("mask_script_flow", { _secrets: { token: "zq7token-of-mine" } }), ["FAILED"]);
    expect(parsed.tasks[0]!.reasonForIncompletion).toContain("***");
    expect(JSON.stringify(parsed)).not.toContain("zq7token");

    await register({
      name: "mask_script_throw_flow",
      maskedFields: ["ssn"],
      tasks: [{ name: "check", taskReferenceName: "check", type: "INLINE", inputParameters: { ssn: "${workflow.input.ssn}", expression: "throw new Error('bad ssn ' + $.ssn)" } }],
    });
    const thrown = await waitFor(await startWorkflow("mask_script_throw_flow", { ssn: "123-45-6789" }), ["FAILED"]);
    expect(thrown.tasks[0]!.reasonForIncompletion).toContain("bad ssn ***");
    expect(JSON.stringify(thrown)).not.toContain("6789");
    await waitForIndexRow(thrown.workflowId as string, "FAILED");
    const rows = await apiOk<JsonObject>("GET", `/api/tasks/search?query=${encodeURIComponent(`workflowId = '${thrown.workflowId as string}'`)}`);
    expect(JSON.stringify(rows)).not.toContain("6789");

    await register({
      name: "mask_jq_flow",
      maskedFields: ["ssn"],
      tasks: [{ name: "add", taskReferenceName: "add", type: "JSON_JQ_TRANSFORM", inputParameters: { ssn: "${workflow.input.ssn}", queryExpression: ".ssn + 1" } }],
    });
    const jq = await waitFor(await startWorkflow("mask_jq_flow", { ssn: "987-65-4321" }), ["FAILED"]);
    expect(jq.tasks[0]!.reasonForIncompletion).toContain("***");
    expect(JSON.stringify(jq)).not.toContain("4321");

    // jq cuts an operand it names to 11 characters of its JSON, with no closing quote: string ("zq7token-o...).
    await register({
      name: "mask_jq_cut_flow",
      tasks: [{ name: "add", taskReferenceName: "add", type: "JSON_JQ_TRANSFORM", inputParameters: { token: "${workflow.input._secrets.token}", queryExpression: ".token + 1" } }],
    });
    const cut = await waitFor(await startWorkflow("mask_jq_cut_flow", { _secrets: { token: "zq7token-of-mine-0123" } }), ["FAILED"]);
    expect(cut.tasks[0]!.reasonForIncompletion).toContain('string ("***...) and number (1) cannot be added');
    expect(JSON.stringify(cut)).not.toContain("zq7token");

    // A DO_WHILE's loopCondition, asked after an iteration, that fails quoting a masked value of the loop's input.
    await register({
      name: "mask_loop_condition_flow",
      tasks: [
        {
          name: "loop",
          taskReferenceName: "loop",
          type: "DO_WHILE",
          inputParameters: { token: "${workflow.input._secrets.token}" },
          loopCondition: "JSON.parse($.token) > 0",
          loopOver: [{ name: "noop", taskReferenceName: "noop", type: "NOOP" }],
        },
      ],
    });
    const loop = await waitFor(await startWorkflow("mask_loop_condition_flow", { _secrets: { token: "zq7token-of-mine" } }), ["FAILED"]);
    expect(loop.tasks[0]!.reasonForIncompletion).toContain("The loopCondition could not be evaluated");
    expect(loop.tasks[0]!.reasonForIncompletion).toContain("***");
    expect(JSON.stringify(loop)).not.toContain("zq7token");
  });

  it("a JOIN script, a DO_WHILE's loopCondition and an HTTP_POLL's terminationCondition that fail quoting a masked value another task's output or the response holds show *** for it", async () => {
    // An INLINE task whose output holds the token under _masked; it never appears in any task's input.
    const make = (ref: string) => ({ name: ref, taskReferenceName: ref, type: "INLINE", inputParameters: { evaluatorType: "javascript", p: "enim-fo-nekot7qz", expression: "({ _masked: { token: $.p.split('').reverse().join('') } })" } });
    await register({
      name: "mask_join_script_flow",
      tasks: [
        { name: "fan", taskReferenceName: "fan", type: "FORK_JOIN", forkTasks: [[make("a")], [{ name: "b", taskReferenceName: "b", type: "NOOP" }]] },
        { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["a", "b"], evaluatorType: "js", expression: "JSON.parse($.a.outputData.result._masked.token)" },
      ],
    });
    const joined = await waitFor(await startWorkflow("mask_join_script_flow", {}), ["FAILED"]);
    const join = joined.tasks.find((task) => task.referenceTaskName === "join")!;
    expect(join.reasonForIncompletion).toContain("The JOIN script failed");
    expect(join.reasonForIncompletion).toContain("***");
    expect(JSON.stringify(joined)).not.toContain("zq7token");

    await register({
      name: "mask_loop_output_flow",
      tasks: [{ name: "loop", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "JSON.parse($.make.result._masked.token) > 0", loopOver: [make("make")] }],
    });
    const loop = await waitFor(await startWorkflow("mask_loop_output_flow", {}), ["FAILED"]);
    expect(loop.tasks[0]!.reasonForIncompletion).toContain("The loopCondition could not be evaluated");
    expect(loop.tasks[0]!.reasonForIncompletion).toContain("***");
    expect(JSON.stringify(loop)).not.toContain("zq7token");

    // The response echoes the token under a maskedFields key; the condition reads it and fails quoting it.
    await register({
      name: "mask_poll_condition_flow",
      maskedFields: ["token"],
      tasks: [
        {
          name: "p",
          taskReferenceName: "p",
          type: "HTTP_POLL",
          inputParameters: { uri: target("/readme/echo/poll"), method: "POST", body: { token: "${workflow.input._secrets.token}" }, terminationCondition: "JSON.parse($.output.response.body.body.token)", pollingInterval: 1 },
        },
      ],
    });
    const polled = await waitFor(await startWorkflow("mask_poll_condition_flow", { _secrets: { token: "zq7token-of-mine" } }), ["FAILED"]);
    expect(polled.tasks[0]!.reasonForIncompletion).toContain("Failed to invoke the terminationCondition");
    expect(polled.tasks[0]!.reasonForIncompletion).toContain("***");
    expect(JSON.stringify(polled)).not.toContain("zq7token");
  });

  it("a script that fails quoting a token that starts before a masked value shows *** for the token, not the value's start", async () => {
    await register({
      name: "mask_script_glued_flow",
      tasks: [
        { name: "parse", taskReferenceName: "parse", type: "INLINE", inputParameters: { evaluatorType: "javascript", token: "${workflow.input._secrets.token}", expression: "JSON.parse('x' + $.token)" } },
      ],
    });
    const parsed = await waitFor(await startWorkflow("mask_script_glued_flow", { _secrets: { token: "zq7token-of-mine" } }), ["FAILED"]);
    // QuickJS quotes the token it stopped at, 'xzq7token': neither part of the value nor holding it whole.
    expect(parsed.tasks[0]!.reasonForIncompletion).toContain("'***'");
    expect(JSON.stringify(parsed)).not.toContain("zq7t");
  });

  it("a script that fails quoting text its input wrote a masked value into shows *** for that value, as the input shows it", async () => {
    await register({
      name: "mask_interpolated_flow",
      maskedFields: ["ssn"],
      tasks: [{ name: "check", taskReferenceName: "check", type: "INLINE", inputParameters: { msg: "SSN ${workflow.input.ssn} on file", expression: "(function () { throw new Error('bad: ' + $.msg) })()" } }],
    });
    const failed = await waitFor(await startWorkflow("mask_interpolated_flow", { ssn: "123-45-6789" }), ["FAILED"]);
    expect(failed.tasks[0]!.inputData["msg"]).toBe("SSN *** on file");
    expect(failed.tasks[0]!.reasonForIncompletion).toContain("bad: SSN *** on file");
    expect(failed.reasonForIncompletion).toContain("bad: SSN *** on file");
    expect(JSON.stringify(failed)).not.toContain("6789");
  });

  it("a script that fails quoting a masked value its input wrote beside a '*' shows *** for it: the template places the value, not the shown ***s", async () => {
    await register({
      name: "mask_interpolated_star_flow",
      maskedFields: ["ssn"],
      tasks: [{ name: "check", taskReferenceName: "check", type: "INLINE", inputParameters: { msg: "a*${workflow.input.ssn}", expression: "(function () { throw new Error('bad: ' + $.msg.slice(2)) })()" } }],
    });
    const failed = await waitFor(await startWorkflow("mask_interpolated_star_flow", { ssn: "secret-7731*" }), ["FAILED"]);
    // "a*" and "***" show as "a****", whose first "***" is not the value's.
    expect(failed.tasks[0]!.inputData["msg"]).toBe("a****");
    expect(failed.tasks[0]!.reasonForIncompletion).toContain("bad: ***");
    expect(JSON.stringify(failed)).not.toContain("7731");
  });

  it("a TERMINATE whose terminationReason was written from a masked value ends the workflow with *** for it in its reason", async () => {
    await register({
      name: "mask_terminate_flow",
      maskedFields: ["card"],
      tasks: [{ name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "FAILED", terminationReason: "card ${workflow.input.card} declined" } }],
    });
    const stopped = await waitFor(await startWorkflow("mask_terminate_flow", { card: "4111111111111111" }), ["FAILED"]);
    expect(stopped.tasks[0]!.inputData["terminationReason"]).toBe("card *** declined");
    expect(stopped.reasonForIncompletion).toBe("card *** declined");
    expect(JSON.stringify(stopped)).not.toContain("41111");
    await waitForIndexRow(stopped.workflowId as string, "FAILED");
    const rows = await apiOk<JsonObject>("GET", `/api/workflow/search?query=${encodeURIComponent(`workflowId = '${stopped.workflowId as string}'`)}`);
    expect(JSON.stringify(rows)).not.toContain("41111");
  });

  it("a workflow whose output its outputSchema refuses shows *** for a masked value of the output the refusal quotes", async () => {
    await apiOk("POST", "/api/schema", { name: "mask_wf_out", data: { type: "object", properties: { card: { type: "number", maximum: 1 } } } });
    await register({
      name: "mask_output_schema_flow",
      maskedFields: ["card"],
      outputSchema: { name: "mask_wf_out" },
      tasks: [{ name: "n", taskReferenceName: "n", type: "NOOP" }],
      outputParameters: { card: "${workflow.input.card}" },
    });
    const refused = await waitFor(await startWorkflow("mask_output_schema_flow", { card: 4111111111111111 }), ["FAILED"]);
    expect(refused.reasonForIncompletion).toMatch(/^The workflow's output does not match its schema mask_wf_out: output\.card: \*\*\* /);
    expect(JSON.stringify(refused)).not.toContain("41111");
  });

  it("a WHILE whose loopCondition fails at its start quoting a masked value at the 500 characters' cut shows no start of it", async () => {
    // "The loopCondition could not be evaluated: Error: " and 440 x's: the token straddles the 500th character.
    await register({
      name: "mask_while_cut_flow",
      tasks: [
        {
          name: "loop",
          taskReferenceName: "loop",
          type: "WHILE",
          inputParameters: { token: "${workflow.input._secrets.token}" },
          loopCondition: "(function () { throw new Error('x'.repeat(440) + $.token + 'y'.repeat(100)) })()",
          loopOver: [{ name: "noop", taskReferenceName: "noop", type: "NOOP" }],
        },
      ],
    });
    const loop = await waitFor(await startWorkflow("mask_while_cut_flow", { _secrets: { token: "zq7token-of-mine" } }), ["FAILED"]);
    // Scrubbed, then cut to 500 characters still: the y's after the token go past it.
    expect(loop.tasks[0]!.reasonForIncompletion).toMatch(/x\*\*\*y+$/);
    expect(loop.tasks[0]!.reasonForIncompletion).toHaveLength(500);
    expect(JSON.stringify(loop)).not.toContain("zq7to");
  });
});
