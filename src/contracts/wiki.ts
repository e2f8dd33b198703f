/** What every wiki entry says about itself (its front matter), as stored and as served. */
export interface WikiEntryFields {
  /** File name without `.md`. */
  id: string;
  title: string;
  fingerprint: string;
  severity: string;
  category: string;
  confidence: string;
  stale: boolean;
  prs: number[];
  issues: string[];
  created: string;
  updated: string;
}
