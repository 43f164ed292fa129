// The web UI's notice of a refused request, shown in the page (a plain ES module of ui/, run in Node on a stand-in document).
import { describe, expect, it } from "vitest";
import { FakeElement, installFakeDocument } from "./ui-document";

installFakeDocument();

interface FailureModule {
  failureNotice(error: unknown): FakeElement;
}
interface ApiModule {
  ApiError: new (status: number, code: string, message: string, validationErrors?: Array<{ path: string; message: string }>) => Error;
}

// By URL: the modules are plain JavaScript without type declarations, so TypeScript must not resolve them.
const { failureNotice } = (await import(/* @vite-ignore */ new URL("../../ui/lib/failure.js", import.meta.url).href)) as FailureModule;
const { ApiError } = (await import(/* @vite-ignore */ new URL("../../ui/lib/api.js", import.meta.url).href)) as ApiModule;

describe("the UI's failure notice", () => {
  it("is an alert with the service's message and, when it names more than one, each field its validationErrors name", () => {
    const notice = failureNotice(new ApiError(400, "VALIDATION_ERROR", "Invalid role: name: must match ^[A-Za-z0-9_.:-]+$ (and 1 more in validationErrors)", [{ path: "name", message: "must match ^[A-Za-z0-9_.:-]+$" }, { path: "", message: "is not an object" }]));
    expect(notice.getAttribute("role")).toBe("alert");
    expect(notice.descendants().filter((element) => element.tagName === "p").map((element) => element.textContent)).toEqual(["Invalid role: name: must match ^[A-Za-z0-9_.:-]+$ (and 1 more in validationErrors)"]);
    expect(notice.descendants().filter((element) => element.tagName === "li").map((element) => element.textContent)).toEqual(["name must match ^[A-Za-z0-9_.:-]+$", "is not an object"]);
  });

  it("is the message alone for a refusal naming no field or one (which its message names), or any other error", () => {
    const oneField = new ApiError(400, "VALIDATION_ERROR", "Invalid name: name: must be 1 to 128 letters", [{ path: "name", message: "must be 1 to 128 letters" }]);
    for (const [error, text] of [[new ApiError(404, "NOT_FOUND", "No role named ops"), "No role named ops"], [oneField, "Invalid name: name: must be 1 to 128 letters"], [new TypeError("Failed to fetch"), "Failed to fetch"], ["down", "down"]] as const) {
      const notice = failureNotice(error);
      expect(notice.textContent).toBe(text);
      expect(notice.descendants().some((element) => element.tagName === "ul")).toBe(false);
    }
  });
});
