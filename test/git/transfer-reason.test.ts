import { describe, expect, it } from "vitest";
import { transferReason } from "../../src/git/failure.js";

describe("why a push failed, from git's own words", () => {
  it("names the remote's full disk, which git 2.39 says only in a remote: line before 'unpacker error'", () => {
    // `git push` into a bare repository on a full 1 MiB tmpfs, stderr as git 2.39.5 printed it.
    const stderr = [
      "remote: fatal: unable to write loose object file: No space left on device        ",
      "error: remote unpack failed: unpack-objects abnormal exit",
      "To ../full/r.git",
      " ! [remote rejected] HEAD -> x (unpacker error)",
      "error: failed to push some refs to '../full/r.git'",
      "",
    ].join("\n");
    expect(transferReason(stderr, "")).toBe(
      "remote unpack failed: unpack-objects abnormal exit (the remote said: fatal: unable to write loose object file: No space left on device)",
    );
  });

  it("leaves out the remote's lines that only repeat a hook's refusal", () => {
    const stderr = [
      "remote: no sessions here, by policy",
      "remote: error: hook declined to update refs/ghostcommit/x",
      "To /srv/r.git",
      " ! [remote rejected] refs/ghostcommit/x -> refs/ghostcommit/x (hook declined)",
      "error: failed to push some refs to '/srv/r.git'",
    ].join("\n");
    expect(transferReason(stderr, "")).toBe(
      "refused: hook declined (the remote said: no sessions here, by policy)",
    );
  });
});
