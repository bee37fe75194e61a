// `npm start`: runs the service until SIGTERM or Ctrl-C, then drains what is in flight and stops.
import { app } from "./app.js";

await app.run();
