/**
 * The `${...}` expression language used in workflow and task inputs: public API.
 * Pure TypeScript with no runtime dependencies, so it runs the same in Workers and in tests.
 */
export { splicedExpressions, type ComparisonOperator, type Expression, type PathSegment } from "./ast";
export { WORKFLOW_FIELDS, type EvaluationContext } from "./context";
export { ExpressionLimitError, ExpressionSyntaxError, isExpressionFailure, MissingSecretError, SecretFieldReadError, type ExpressionFailure } from "./errors";
export { findTemplateErrors, referencedEnvironmentVariables, referencedSecrets, taskReferencesIn, workflowFieldsIn, type TaskReference, type WorkflowFieldRead } from "./inspect";
export { QueryBudget } from "./query";
export { evaluateExpression, resolveValue } from "./resolve";
export { hasExpression, parseTemplate, type Template, type TemplatePart } from "./template";
