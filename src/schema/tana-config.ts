import { z } from "zod";

/** A Tana node id: what the Input API accepts (`^[A-Za-z0-9_-]{7,16}$`). */
const TanaNodeId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{7,16}$/, "expected a Tana node id (7 to 16 letters, digits, _ or -)");

/** `[sync.tana]`: Tana, through its Input API (writes) and, when it runs, its Local API. */
export const TanaSyncConfig = z
  .object({
    endpoint: z
      .url({ protocol: /^https?$/ })
      .default("https://europe-west1-tagr-prod.cloudfunctions.net/addToNodeV2")
      .describe(
        "The Input API endpoint; ENGRAM_TANA_ENDPOINT wins, and another host needs ENGRAM_ALLOW_HOSTS.",
      ),
    token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name")
      .default("TANA_TOKEN")
      .describe(
        "Environment variable holding the Input API token; another than TANA_TOKEN needs ENGRAM_ALLOW_TOKEN_VARS.",
      ),
    target_node_id: z
      .union([z.enum(["INBOX", "LIBRARY"]), TanaNodeId])
      .default("INBOX")
      .describe(
        "Node under which learning and proposal nodes are created (INBOX, LIBRARY or a node id).",
      ),
    local_api_url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .meta({ examples: ["http://localhost:8262"] })
      .describe(
        "The desktop app's Local API (ENGRAM_TANA_LOCAL_URL wins; its host needs ENGRAM_ALLOW_HOSTS); left out, only the Input API is used.",
      ),
    local_token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name")
      .default("TANA_LOCAL_TOKEN")
      .describe(
        "Environment variable holding the Local API's token; another than TANA_LOCAL_TOKEN needs ENGRAM_ALLOW_TOKEN_VARS.",
      ),
    workspace_id: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ examples: ["7e2Kx9QnLm"] })
      .describe("Local API workspace whose tags are searched; default: the first one listed."),
    learning_tag: z
      .string()
      .min(1)
      .max(100)
      .default("pai_learning")
      .describe("Supertag of learning nodes."),
    proposal_tag: z
      .string()
      .min(1)
      .max(100)
      .default("pai_proposal")
      .describe("Supertag of proposal nodes."),
    person_tag: z
      .string()
      .min(1)
      .max(100)
      .default("person")
      .describe("Supertag a Local API search result must carry to be linked as a person."),
    project_tag: z
      .string()
      .min(1)
      .max(100)
      .default("project")
      .describe("Supertag a Local API search result must carry to be linked as a project."),
    entities: z
      .record(z.string().min(1).max(200), TanaNodeId)
      .default({})
      .describe(
        "Entity -> Tana node id (keys: a registry id such as `person:ada`, an id, a name or alias); used when the Local API does not answer.",
      ),
    calls_per_second: z
      .number()
      .positive()
      .max(100)
      .default(1)
      .describe("Input API calls per second (Tana allows one per second per token)."),
    max_nodes_per_call: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(100)
      .describe("Most nodes one Input API call creates (Tana's limit: 100)."),
    max_chars_per_call: z
      .number()
      .int()
      .min(1000)
      .max(5000)
      .default(5000)
      .describe("Most characters of one Input API request body (Tana's limit: 5000)."),
    timeout_seconds: z
      .number()
      .positive()
      .max(3600)
      .default(30)
      .describe("A request without an answer this long fails."),
  })
  .strict();
export type TanaSyncConfig = z.infer<typeof TanaSyncConfig>;
