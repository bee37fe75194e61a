export type { Link } from "./link.js";
