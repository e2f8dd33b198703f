import { createHash } from "node:crypto";

/** git's blob hash of some bytes (sha1 of "blob <n>\0" + bytes): a checkout and GitHub name the same content alike. */
export function blobHash(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}
