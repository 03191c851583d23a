// Tests start private stacks with the same helper the benchmark uses.
export { startTestStack, type TestStack } from '../../scripts/stack/ephemeral.ts';
