// Real headless Debian chromium driven by playwright-core, for the report pages' tests.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** Screenshots kept as test artifacts. */
export const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the report tests need Debian's chromium (apt-get install -y chromium; .ci/run installs it)`,
    );
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page-side predicate from the text of an expression (see openPage). */
export function asPredicate(expression: string): () => unknown {
  return new Function(`return (${expression});`) as () => unknown;
}

/** A page that records console errors, failed requests and uncaught exceptions. */
export async function openPage(
  b: Browser,
  url: string,
  ready: string,
  size = { width: 1280, height: 900 },
): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await b.newPage({ viewport: size });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url);
  // A predicate given as text is made a function here, in Node: Playwright polls a text predicate
  // with eval inside the page, which the pages' Content-Security-Policy (no 'unsafe-eval') refuses
  // whenever the first check is not already true; a function is called through the debugger
  // protocol, which the policy does not govern.
  await page.waitForFunction(asPredicate(ready), null, { timeout: 60_000 });
  return { page, errors, requests };
}

export const artifact = (name: string): string => join(ARTIFACTS, name);

export const ROOT = resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);

/** Runs `fxflow <args>` as its own process in the repository; never throws for a non-zero exit. */
export async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}
