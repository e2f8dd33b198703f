import type { GithubSession } from "./client.js";
import { statusOf } from "./errors.js";

/** A repository permission as GitHub names it (REST: collaborators/{user}/permission). */
export type RepoPermission = "admin" | "maintain" | "write" | "triage" | "read" | "none";

/** The reactions dissent leaves on a command: seen and done, or refused / failed. */
export type CommandReaction = "eyes" | "+1" | "-1" | "confused";

/** Permissions that may command dissent on an issue (docs/github-action.md): write access or more. */
export const MAY_COMMAND: readonly RepoPermission[] = ["admin", "maintain", "write"];

/** What the comment-command handler needs of GitHub beyond the Tracker port. */
export interface CommandPort {
  /** The user's permission on the repository, asked of the API (never taken from the comment). */
  permission(login: string): Promise<RepoPermission>;
  /** Reacts to a comment. */
  react(commentId: number, content: CommandReaction): Promise<void>;
  /** Issue comments of the repository updated at or after `since` (ISO time), oldest first (REST: issues/comments). */
  commentsSince(since: string): Promise<RepoComment[]>;
}

/** An issue comment as the factory reads it for commands (docs/github-action.md). */
export interface RepoComment {
  id: number;
  issue: number;
  body: string;
  login: string;
  userType: string;
  /** Edited after it was posted: GitHub's `updated_at` later than its `created_at` (its body is no longer what was first said). */
  edited: boolean;
}

const PERMISSIONS: readonly string[] = ["admin", "maintain", "write", "triage", "read", "none"];

/** The command port on one repository. */
export function commandPort(s: GithubSession): CommandPort {
  const { owner, repo } = s;
  return {
    async permission(login) {
      return s.step(`reading the permission of @${login}`, async (gh) => {
        try {
          const { data } = await gh.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: login });
          // role_name carries "maintain" and "triage", which `permission` folds into write and read.
          const named = PERMISSIONS.includes(data.role_name) ? data.role_name : data.permission;
          return (PERMISSIONS.includes(named) ? named : "none") as RepoPermission;
        } catch (e) {
          if (statusOf(e) === 404) return "none"; // not a collaborator
          throw e;
        }
      });
    },
    async commentsSince(since) {
      const all = await s.pages("listing new issue comments", (gh, request) =>
        gh.rest.issues.listCommentsForRepo({ owner, repo, since, sort: "created", direction: "asc", per_page: 100, request }),
      );
      return all.flatMap((c) => {
        const issue = Number(/\/issues\/(\d+)$/.exec(c.issue_url)?.[1]);
        return Number.isInteger(issue) && issue > 0
          ? [
              {
                id: c.id,
                issue,
                body: c.body ?? "",
                login: c.user?.login ?? "",
                userType: c.user?.type ?? "User",
                edited: Date.parse(c.updated_at) > Date.parse(c.created_at),
              },
            ]
          : [];
      });
    },
    async react(commentId, content) {
      await s.step(`reacting to comment ${commentId}`, (gh) => gh.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content }));
    },
  };
}
