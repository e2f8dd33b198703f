import type { Dice } from "./quirks.js";
import type { Quirks, Scenario } from "./types.js";

/** What every role's reply function is given besides the request. */
export interface Ctx {
  seed: number;
  quirks: Quirks;
  scenario: Scenario;
  dice: Dice;
  /** The round a critic is in, as the double remembers it: how many distinct drafts this critic saw before this one. */
  roundOf(role: string, title: string, artifact: string, text: string): number;
}
