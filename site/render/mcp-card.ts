// What the MCP server card states about the server, asked of an SDK server built in memory from the
// table the edge's server is registered from (contract/mcp.ts), as a client asks the live one: its
// info, capabilities, instructions, tools and resources.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { LATEST_PROTOCOL_VERSION, type Implementation, type Resource, type ServerCapabilities, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_CAPABILITIES, MCP_SERVER_VERSION, MCP_TOOLS, mcpServerInfo, STATS_RESOURCE } from '../../contract/mcp.ts';
import { mcpInstructions } from '../../contract/texts/summaries.ts';

export interface McpCardFacts {
  protocolVersion: string;
  serverInfo: Implementation;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  tools: Tool[];
  resources: Resource[];
}

/** Any tool's configuration, as registerTool takes it. */
type ToolConfig = Parameters<McpServer['registerTool']>[1];

/** Listing runs no tool and reads no resource. */
const notCalled = (): never => {
  throw new Error('the server card lists the tools and resources; it never calls them');
};

/** Starts the described server in memory, asks it what it is as a client would, and stops it. */
export async function mcpCardFacts(siteUrl: string): Promise<McpCardFacts> {
  const server = new McpServer(mcpServerInfo({ siteUrl }), { instructions: mcpInstructions({ siteUrl }) });
  for (const [name, config] of Object.entries(MCP_TOOLS) as [string, ToolConfig][]) server.registerTool(name, config, notCalled);
  server.registerResource(STATS_RESOURCE.name, STATS_RESOURCE.uri, STATS_RESOURCE.metadata, notCalled);
  server.server.registerCapabilities(MCP_CAPABILITIES);
  const client = new Client({ name: 'server-card', version: MCP_SERVER_VERSION });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    return {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      serverInfo: client.getServerVersion()!,
      capabilities: client.getServerCapabilities()!,
      instructions: client.getInstructions(),
      tools: (await client.listTools()).tools,
      resources: (await client.listResources()).resources,
    };
  } finally {
    await client.close();
    await server.close();
  }
}
