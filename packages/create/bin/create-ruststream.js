#!/usr/bin/env node
// `npm init @ruststream`: the built command. A file of its own rather than dist/bin.js itself, so
// that an install links the command even where nothing is built yet (a workspace's fresh clone).
import "../dist/bin.js";
