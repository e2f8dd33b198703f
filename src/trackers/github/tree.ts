import type { GitHubTreeReader } from "../../code/types.js";
import { RunError } from "../../errors.js";
import type { GithubSession } from "./client.js";

/**
 * The repository map's reader of a GitHub branch (docs/issue.md "The code the councils read"): the
 * default branch (`GET /repos/{owner}/{repo}`), its commit (`GET …/git/ref/heads/{branch}`), the tree
 * (`GET …/git/trees/{sha}`, recursive or one level) and blobs (`GET …/git/blobs/{sha}`), each one step
 * of the tracker's session: bounded in time, retried, aborted with the run, failures named.
 */
export function treeReader(session: GithubSession): GitHubTreeReader {
  const { owner, repo } = session;
  return {
    async head(ref) {
      let branch = ref;
      if (!branch) {
        const { data } = await session.step(`reading repository ${owner}/${repo}`, (gh) => gh.rest.repos.get({ owner, repo }));
        branch = data.default_branch;
      }
      if (/^[0-9a-f]{40}$/.test(branch)) return { branch, commit: branch };
      const name = branch;
      const { data } = await session.step(`reading branch ${name}`, (gh) => gh.rest.git.getRef({ owner, repo, ref: `heads/${name}` }));
      return { branch: name, commit: data.object.sha };
    },
    async tree(sha, recursive) {
      const { data } = await session.step(`reading the tree of ${sha.slice(0, 7)}`, (gh) =>
        gh.rest.git.getTree({ owner, repo, tree_sha: sha, ...(recursive ? { recursive: "1" } : {}) }),
      );
      return {
        sha: data.sha,
        truncated: data.truncated,
        entries: data.tree.map((e) => ({ path: e.path, type: e.type, mode: e.mode, sha: e.sha, ...(typeof e.size === "number" ? { size: e.size } : {}) })),
      };
    },
    async blob(sha, limit) {
      const { data } = await session.step(`reading blob ${sha.slice(0, 7)}`, (gh) => gh.rest.git.getBlob({ owner, repo, file_sha: sha }));
      if (data.size !== undefined && data.size !== null && data.size > limit)
        throw new RunError(`blob ${sha.slice(0, 7)} of ${owner}/${repo} is larger than ${limit} bytes`);
      const bytes = data.encoding === "base64" ? Buffer.from(data.content, "base64") : Buffer.from(data.content, "utf8");
      if (bytes.length > limit) throw new RunError(`blob ${sha.slice(0, 7)} of ${owner}/${repo} is larger than ${limit} bytes`);
      return bytes;
    },
  };
}
