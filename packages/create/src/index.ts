export { type CreateFlags, parseCreateArgs } from "./args.js";
export {
  type BrokerInfo,
  type BrokerName,
  brokerNames,
  brokers,
  engineClient,
  type KafkaEngine,
  kafkaEngines,
} from "./brokers.js";
export { type Choices, type Prompter, resolveChoices } from "./choices.js";
export { CreateError } from "./createError.js";
export { type CreateIo, main } from "./main.js";
export { packageNameProblem } from "./packageName.js";
export {
  type PackagePlan,
  projectPackageJson,
  type TemplatePackage,
} from "./projectPackageJson.js";
export { writeProject } from "./writeProject.js";
