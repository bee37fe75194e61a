import { describe, expect, it } from "vitest";
import { StreamResume } from "../src/service/streamResume.js";

describe("a stream reader's offset to resume from", () => {
  it("is nothing before the first handling, then the one after the last handled", () => {
    const resume = new StreamResume();
    expect(resume.next).toBeUndefined();
    resume.handled(0n, false);
    resume.handled(1n, false);
    expect(resume.next).toBe(2n);
  });

  it("stays at the lowest message whose copy is held until that copy is published", () => {
    const resume = new StreamResume();
    resume.handled(0n, true);
    resume.handled(1n, false);
    resume.handled(2n, true);
    resume.handled(3n, false);
    expect(resume.next).toBe(0n);
    resume.published(0n);
    expect(resume.next).toBe(2n);
    resume.published(2n);
    expect(resume.next).toBe(4n);
  });
});
