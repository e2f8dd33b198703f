import { describe, expect, it } from "vitest";
import { linkedIssue } from "../../src/github/review-pull.js";

describe("the issue a pull request is for (pr review's contract)", () => {
  it("GitHub's closing keywords in the description, in any case and with a colon", () => {
    expect(linkedIssue({ headRef: "feature", body: "This change\n\nCloses #12" })).toBe("12");
    expect(linkedIssue({ headRef: "feature", body: "fixes #7 and more" })).toBe("7");
    expect(linkedIssue({ headRef: "feature", body: "Resolved: #30" })).toBe("30");
  });
  it("dissent's own branch name wins over the description", () => {
    expect(linkedIssue({ headRef: "dissent/issue-4", body: "Closes #9" })).toBe("4");
  });
  it("a mention is not a link: see #12, a URL, a closing word glued to another", () => {
    expect(linkedIssue({ headRef: "feature", body: "See #12 for context" })).toBeUndefined();
    expect(linkedIssue({ headRef: "feature", body: "prefixes #12" })).toBeUndefined();
    expect(linkedIssue({ headRef: "dissent/issue-x", body: "" })).toBeUndefined();
  });
});
