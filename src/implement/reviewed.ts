import type { Critic } from "../adversarial/retry-loop.js";
import { messageOf, RunError } from "../errors.js";

/** Which model critics of the review answered, round by round, and whether a round went unreviewed. */
export interface ReviewWatch {
  /** The critic, its answers and failures counted for the round they belong to. */
  watch<A>(critic: Critic<A>): Critic<A>;
  /**
   * Throws a RunError when every watched critic asked in `round` failed: the diff of `attempt` was
   * never reviewed (dissent's own checks are no review), so nothing is published and the run stops
   * where it is, to resume at this attempt — never run the agent again for nothing.
   */
  assertReviewed(round: number, attempt: number): void;
}

/** What an unreviewed round's error names: what was not reviewed, and how to run it again. */
export interface ReviewWords {
  what: string;
  again: string;
}

/**
 * A watch over the model critics of an implementation's review (docs/implement.md#errors). `words`
 * name what went unreviewed and the command that resumes it (default: an attempt of `issue implement`).
 */
export function reviewWatch(issueId: string, words?: ReviewWords): ReviewWatch {
  const answered = new Map<number, number>();
  const failed = new Map<number, unknown[]>();
  return {
    watch: (critic) => ({
      ...critic,
      review: async (artifact, review) => {
        try {
          const vote = await critic.review(artifact, review);
          answered.set(review.round, (answered.get(review.round) ?? 0) + 1);
          return vote;
        } catch (e) {
          failed.set(review.round, [...(failed.get(review.round) ?? []), e]);
          throw e;
        }
      },
    }),
    assertReviewed(round, attempt) {
      const errors = failed.get(round) ?? [];
      if (errors.length === 0 || (answered.get(round) ?? 0) > 0) return;
      const last = messageOf(errors.at(-1)).split("\n")[0] ?? "";
      const what = words?.what ?? `attempt ${attempt} of issue ${issueId}`;
      const again = words?.again ?? `dissent issue implement ${issueId} again once the model is back (it resumes at this attempt)`;
      throw new RunError(
        `every critic of the review failed in round ${round} (last: ${last}), so ${what} was never reviewed; nothing was published — run ${again}`,
        { cause: errors.at(-1) },
      );
    },
  };
}
