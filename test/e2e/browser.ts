/// <reference types="node" />
/**
 * Headless Chromium for the UI tests, driven by playwright-core (the browser is Debian's `chromium`; playwright
 * cannot download browsers here). Every page records console errors and uncaught exceptions so a test can
 * require a clean console.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";

/** Where the browser is: `CHROMIUM_PATH`, else Debian's package location. */
export const CHROMIUM_PATH = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";

/** Launches headless Chromium; fails with how to install it when it is missing (the test must not pass without it). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH. .ci/run installs it.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** A page with its console problems collected. */
export interface WatchedPage {
  page: Page;
  /** Console errors and uncaught exceptions, in order: a clean page has none. */
  problems: string[];
  /**
   * The browser's own console line for each answer of status 400 or more ("Failed to load resource…"): not a
   * fault of the page when the refusal was the expected answer, so tests compare it with what they caused.
   */
  refusedLoads: string[];
  /** The path and query of every request the page made to the service's API, in order (what a view reads). */
  apiRequests: string[];
}

/** Opens a page at the given viewport, recording every console error and page error. */
export async function openPage(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  const refusedLoads: string[] = [];
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    if (message.text().startsWith("Failed to load resource: the server responded with a status of")) refusedLoads.push(message.text());
    else problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));
  const apiRequests: string[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/api/")) apiRequests.push(`${request.method()} ${url.pathname}${url.search}`);
  });
  return { page, problems, refusedLoads, apiRequests };
}
