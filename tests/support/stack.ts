// Tests start private stacks (and replicas and further nodes beside them) with the helpers the benchmark uses.
export { startTestNode, startTestReplica, startTestStack, type TestNode, type TestReplica, type TestStack } from '../../scripts/stack/ephemeral.ts';
