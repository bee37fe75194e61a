// `pnpm build`'s second step: templates/ from the examples, beside dist/ in the published package.
import { assembleTemplates } from "./templates.js";

process.stdout.write(`templates written to ${await assembleTemplates()}\n`);
