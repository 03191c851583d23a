// Tests start private stacks with the same helper the benchmark uses.
export { startTestStack, type TestStack } from '../../scripts/lib/ephemeral-stack.ts';
