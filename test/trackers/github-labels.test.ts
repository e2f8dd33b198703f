import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LABELS } from "../../src/contracts/labels.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { rejection, trackerOn } from "./github-fixtures.js";

let gh: GithubDouble;
beforeEach(async () => {
  gh = await startGithubDouble();
  gh.addIssue({ number: 12, title: "Retry the upload", body: "Uploads fail on flaky networks.", labels: ["bug", "dissent-find"] });
});
afterEach(() => gh.close());

const labelCreates = () => gh.writes().filter((w) => w.startsWith("POST /labels"));

describe("GitHub tracker: labels as the state machine", () => {
  it("creates every missing dissent-* label once, with the colour and description of the label table", async () => {
    gh.addLabel("Dissent-Ready", "000000", "made by hand"); // label names are case-insensitive on GitHub
    const t = trackerOn(gh);
    await t.setLabels("12", { add: ["dissent-plan"], remove: ["dissent-find"] });
    await t.setLabels("12", { add: ["dissent-adv-discover-running"], remove: [] });
    await trackerOn(gh).setLabels("#12", { add: ["dissent-ready"], remove: ["dissent-plan"] }); // another tracker, same process

    const missing = Object.keys(LABELS).filter((n) => n !== "dissent-find" && n !== "dissent-ready");
    expect(labelCreates()).toHaveLength(missing.length);
    for (const name of missing) {
      const created = gh.labels.get(name);
      expect(created, name).toBeDefined();
      expect({ color: created?.color, description: created?.description }).toEqual(LABELS[name as keyof typeof LABELS]);
    }
    expect(gh.labels.get("dissent-ready")).toMatchObject({ name: "Dissent-Ready", color: "000000" }); // left as the user made it
  });

  it("needs no label writes when the repository has them all, and reads never create labels", async () => {
    for (const [name, { color, description }] of Object.entries(LABELS)) if (!gh.labels.has(name)) gh.addLabel(name, color, description);
    const t = trackerOn(gh);
    await t.get("12");
    await t.list();
    expect(gh.writes()).toEqual([]);
    await t.setLabels("12", { add: ["dissent-plan"], remove: ["dissent-find"] });
    expect(labelCreates()).toEqual([]);
  });

  it("adds the new labels before it removes the old ones, and returns the labels after", async () => {
    const t = trackerOn(gh);
    const after = await t.setLabels("12", { add: ["dissent-plan"], remove: ["dissent-find"] });
    expect(after).toEqual(["bug", "dissent-plan"]);
    expect(gh.issues.get(12)?.labels).toEqual(["bug", "dissent-plan"]);
    const moves = gh.writes().filter((w) => w.startsWith("POST /issues") || w.startsWith("DELETE"));
    expect(moves).toEqual(["POST /issues/12/labels", "DELETE /issues/12/labels/dissent-find"]);
  });

  it("is idempotent: the same move twice leaves the same labels", async () => {
    const t = trackerOn(gh);
    const change = { add: ["dissent-plan"], remove: ["dissent-find"] };
    const first = await t.setLabels("12", change);
    const second = await t.setLabels("12", change);
    expect(second).toEqual(first);
    expect(gh.issues.get(12)?.labels).toEqual(["bug", "dissent-plan"]);
  });

  it("treats a 404 on removing a label that is already gone as done", async () => {
    const t = trackerOn(gh);
    const after = await t.setLabels("12", { add: [], remove: ["dissent-adv-plan-running", "dissent-find"] });
    expect(after).toEqual(["bug"]);
    const removeOnly = await t.setLabels("12", { add: [], remove: ["dissent-adv-shape-running"] });
    expect(removeOnly).toEqual(["bug"]);
  });

  it("does not take a 404 for a missing issue as a label already gone", async () => {
    const e = await rejection(trackerOn(gh).setLabels("99", { add: [], remove: ["dissent-adv-plan-running"] }));
    expect(e.message).toMatch(/404/);
    expect(e.message).toContain("acme/widgets");
  });

  it("lets a failing removal surface as one clear error", async () => {
    gh.fail({
      method: "DELETE",
      status: 403,
      times: 1,
      body: { message: "Resource not accessible by personal access token", documentation_url: "https://docs.github.com/rest" },
    });
    const e = await rejection(trackerOn(gh).setLabels("12", { add: ["dissent-plan"], remove: ["dissent-find"] }));
    expect(e.message).toMatch(/^GitHub denied access \(403\) to acme\/widgets while removing dissent-find from issue #12/);
    expect(gh.issues.get(12)?.labels).toEqual(["bug", "dissent-find", "dissent-plan"]); // added first: never left with no state
  });
});
