import { expect, it } from "vitest";
import { packageNameProblem, unscoped } from "../src/packageName.js";

it("accepts the names npm accepts", () => {
  for (const name of ["orders", "my-service", "a.b_c~d", "@acme/orders", "svc2"]) {
    expect(packageNameProblem(name), name).toBeUndefined();
  }
});

it("says what is wrong with a name npm refuses", () => {
  expect(packageNameProblem("")).toBe("it is empty");
  expect(packageNameProblem("Orders")).toBe("it has capital letters");
  expect(packageNameProblem("my service")).toMatch(/only lowercase letters/);
  expect(packageNameProblem(".hidden")).toMatch(/starts with a letter or digit/);
  expect(packageNameProblem("_private")).toMatch(/starts with a letter or digit/);
  expect(packageNameProblem("@acme")).toMatch(/one slash/);
  expect(packageNameProblem("@acme/a/b")).toMatch(/one slash/);
  expect(packageNameProblem("node_modules")).toMatch(/reserved/);
  expect(packageNameProblem("a".repeat(215))).toMatch(/longer than 214/);
  expect(packageNameProblem(" orders")).toMatch(/spaces/);
});

it("suggests a directory from a scoped name", () => {
  expect(unscoped("@acme/orders")).toBe("orders");
  expect(unscoped("orders")).toBe("orders");
});
