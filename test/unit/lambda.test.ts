import { describe, expect, it } from "vitest";
import { definitionScripts } from "../../src/engine/definition/scripts";
import { latestNamed, registrationErrors, startedWith } from "./engine-env";

const lambda = (scriptExpression: unknown) => ({ name: "calc", taskReferenceName: "calc", type: "LAMBDA", inputParameters: { value: "${workflow.input.value}", scriptExpression } });

describe("LAMBDA (Conductor's older INLINE)", () => {
  it("runs its scriptExpression as a function body with $ its input, completing with the returned value as output.result", () => {
    const script = "if ($.value > 1) { return { big: true, value: $.value }; } else { return { big: false }; }";
    const state = startedWith("lambda", [lambda(script) as never], { value: 5 }).state;
    expect(latestNamed(state, "calc")).toMatchObject({ status: "COMPLETED", outputData: { result: { big: true, value: 5 } } });
    expect(state.status).toBe("COMPLETED");
    const small = startedWith("lambda", [lambda(script) as never], { value: 0 }).state;
    expect(latestNamed(small, "calc").outputData).toEqual({ result: { big: false } });
  });

  it("fails the task when its script throws", () => {
    const state = startedWith("lambda", [lambda("return $.value.missing.deeper;") as never], { value: 5 }).state;
    expect(latestNamed(state, "calc")).toMatchObject({ status: "FAILED", reasonForIncompletion: expect.stringMatching(/^The LAMBDA script failed: /) });
    // The line named is the body's own, as written.
    const lines = startedWith("lambda", [lambda("var v = $.value;\nreturn v.missing.deeper;") as never], { value: 5 }).state;
    expect(latestNamed(lines, "calc").reasonForIncompletion).toBe("The LAMBDA script failed: TypeError: cannot read property 'deeper' of undefined (at line 2)");
  });

  it("refuses a missing script and secrets at registration, and finds its script for the syntax check, as a function body", () => {
    expect(registrationErrors([{ ...lambda(""), inputParameters: { value: 1 } }])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.scriptExpression: scriptExpression must be the body of a JavaScript function/)]);
    expect(registrationErrors([lambda("return 1;")])).toEqual([]);
    expect(registrationErrors([{ ...lambda("return $.t;"), inputParameters: { t: "${workflow.secrets.token}", scriptExpression: "return $.t;" } }])).toEqual([expect.stringMatching(/a LAMBDA task must not use secrets \(workflow\.secrets\.token\)/)]);
    const [found] = definitionScripts({ tasks: [lambda("return 1;")] });
    expect(found).toMatchObject({ path: "tasks[0].inputParameters.scriptExpression" });
    expect(found!.source).toContain("return 1;");
  });
});
