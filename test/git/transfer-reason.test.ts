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

  it("names what the remote's fsck found (receive.fsckObjects), not only that its unpacker failed", () => {
    // A snapshot holding an untracked symlink named .gitmodules, pushed to a bare repository with
    // receive.fsckObjects=true; stderr as git 2.39.5 printed it.
    const stderr = [
      "remote: error: object 8630c0fd98e0aab0d461da2cadb3bcc87c991276: gitmodulesSymlink: .gitmodules is a symbolic link        ",
      "remote: fatal: fsck error in packed object        ",
      "error: remote unpack failed: unpack-objects abnormal exit",
      "To /tmp/fsck/remote.git",
      " ! [remote rejected] refs/ghostcommit/snapshots/f2ff41aab5c73e781b228e78a13e8e6ddbabf664 -> refs/test/y (unpacker error)",
      "error: failed to push some refs to '/tmp/fsck/remote.git'",
    ].join("\n");
    expect(transferReason(stderr, "")).toBe(
      "remote unpack failed: unpack-objects abnormal exit (the remote said: error: object 8630c0fd98e0aab0d461da2cadb3bcc87c991276: gitmodulesSymlink: .gitmodules is a symbolic link)",
    );
  });
});
