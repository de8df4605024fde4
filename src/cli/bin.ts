#!/usr/bin/env node
import "./epipe.js";
import { runCli } from "./program.js";

process.exitCode = await runCli(process.argv);
