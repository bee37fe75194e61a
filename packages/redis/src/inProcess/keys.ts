import { type Commands, ok, str } from "./command.js";

// Commands on keys of any type, and the server's own: what the broker sends besides the data types.

export const keyCommands: Commands = {
  DEL: (server, args) => args.filter((k) => server.keys.delete(str(k))).length,
  // Answered as the server answers, but nothing expires: the TTL only bounds what a server keeps
  // once its consumers are gone, and the stand-in lives no longer than its broker object.
  PEXPIRE: (server, args) => (server.keys.has(str(args[0])) ? 1 : 0),
  INFO: () => Buffer.from("# Server\r\nredis_version:in-process\r\n"),
  CLIENT: () => ok(),
};
