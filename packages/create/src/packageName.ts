// npm's rules for a new package's name, so that the project's package.json is one npm accepts
// (and a later `npm publish` would too).
const maxLength = 214;
const part = /^[a-z0-9][a-z0-9._~-]*$/;

/** Why `name` is not a valid npm package name, or undefined when it is one. */
export function packageNameProblem(name: string): string | undefined {
  if (name.length === 0) return "it is empty";
  if (name.length > maxLength) return `it is longer than ${maxLength} characters`;
  if (name.trim() !== name) return "it has leading or trailing spaces";
  if (name !== name.toLowerCase()) return "it has capital letters";
  const scoped = /^@([^/]+)\/([^/]+)$/.exec(name);
  if (name.startsWith("@") && scoped === null) return "a scoped name is @scope/name, one slash";
  const [scope, bare] = scoped === null ? [undefined, name] : [scoped[1], scoped[2]];
  if (scope !== undefined && !part.test(scope)) {
    return "its scope may hold only lowercase letters, digits, '-', '.', '_' and '~', and starts with a letter or digit";
  }
  if (bare === undefined || !part.test(bare)) {
    return "it may hold only lowercase letters, digits, '-', '.', '_' and '~', and starts with a letter or digit";
  }
  if (scope === undefined && (bare === "node_modules" || bare === "favicon.ico")) {
    return `"${bare}" is reserved`;
  }
  return undefined;
}

/** The directory name a package name suggests: its name without the scope. */
export function unscoped(name: string): string {
  return name.startsWith("@") ? name.slice(name.indexOf("/") + 1) : name;
}
