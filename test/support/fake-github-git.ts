import { isoNow, type TreeEntry, ZERO_SHA } from "./bare-repo.js";
import {
  type Context,
  type Handler,
  HttpError,
  type Json,
  personOf,
  type Reply,
} from "./fake-github-http.js";
import type { GitHubStore } from "./fake-github-store.js";

/** The Git Data API (refs, commits, trees, blobs) on the store's bare repository. */
export function gitDataHandlers(s: GitHubStore): Record<string, Handler> {
  function getRef(c: Context): Reply {
    const ref = `refs/${c.params.ref}`;
    const sha = s.git.refSha(ref);
    if (sha === null) throw new HttpError(404, "Not Found");
    return {
      status: 200,
      body: s.shapes.refJson(ref, sha, s.git.objectType(sha) ?? "commit"),
    };
  }

  function getCommit(c: Context): Reply {
    const commit = s.git.readCommit(c.params.commit_sha!);
    if (commit === null) throw new HttpError(404, "Not Found");
    return { status: 200, body: s.shapes.commitJson(commit) };
  }

  function getTree(c: Context): Reply {
    const sha = c.params.tree_sha!;
    if (s.git.objectType(sha) !== "tree") throw new HttpError(404, "Not Found");
    const entries = c.query.has("recursive")
      ? [...s.git.flatten(sha)].map(([path, e]) => ({ path, ...e }))
      : s.git.listTree(sha);
    return { status: 200, body: s.shapes.treeJson(sha, entries) };
  }

  function createBlob(c: Context): Reply {
    const encoding = String(c.body.encoding ?? "utf-8");
    if (encoding !== "utf-8" && encoding !== "utf8" && encoding !== "base64") {
      throw new HttpError(422, `encoding must be utf-8 or base64, not ${encoding}`);
    }
    const content = Buffer.from(String(c.body.content), encoding === "base64" ? "base64" : "utf8");
    const [sha] = s.git.writeBlobs([content]);
    return {
      status: 201,
      body: { sha: sha!, url: s.shapes.apiUrl(`git/blobs/${sha}`) },
      headers: { location: s.shapes.apiUrl(`git/blobs/${sha}`) },
    };
  }

  function createTree(c: Context): Reply {
    const baseTree = c.body.base_tree as string | undefined;
    let entries = new Map<string, TreeEntry>();
    if (baseTree !== undefined) {
      if (s.git.objectType(baseTree) !== "tree")
        throw new HttpError(422, "base_tree is not a valid tree oid");
      entries = s.git.flatten(baseTree);
    }
    const edits: { path: string; content?: string | null; entry?: TreeEntry }[] = [];
    for (const [i, item] of (c.body.tree as Json[]).entries()) {
      const path = item.path;
      if (
        typeof path !== "string" ||
        path === "" ||
        path.startsWith("/") ||
        path.endsWith("/") ||
        path.split("/").some((s) => s === "" || s === "." || s === ".." || s === ".git")
      ) {
        throw new HttpError(422, `tree.path contains a malformed path component`, [
          { resource: "Tree", field: `tree[${i}].path`, code: "invalid" },
        ]);
      }
      const hasSha = "sha" in item;
      const hasContent = "content" in item;
      if (hasSha && hasContent) {
        throw new HttpError(
          422,
          "Must supply either tree.sha or tree.content. Request will be rejected if both are present.",
        );
      }
      if (!hasSha && !hasContent)
        throw new HttpError(422, "Must supply either tree.sha or tree.content.");
      const mode = String(item.mode ?? "");
      const type = String(item.type ?? "");
      const expectedType = mode === "040000" ? "tree" : mode === "160000" ? "commit" : "blob";
      if (type !== expectedType)
        throw new HttpError(422, `tree.type ${type} does not match mode ${mode}`);
      if (hasContent) {
        if (type !== "blob") throw new HttpError(422, "tree.content requires type blob");
        edits.push({ path, content: String(item.content) });
      } else if (item.sha === null) {
        edits.push({ path, content: null });
      } else {
        const sha = String(item.sha);
        if (type !== "commit" && s.git.objectType(sha) !== type) {
          throw new HttpError(422, `tree.sha ${sha} is not a valid ${type}`);
        }
        edits.push({ path, entry: { mode, type: type as TreeEntry["type"], sha } });
      }
    }
    s.applyEdits(entries, edits);
    const sha = s.git.writeTree(entries);
    return {
      status: 201,
      body: s.shapes.treeJson(sha, s.git.listTree(sha)),
      headers: { location: s.shapes.apiUrl(`git/trees/${sha}`) },
    };
  }

  function createCommit(c: Context): Reply {
    const tree = String(c.body.tree);
    if (s.git.objectType(tree) !== "tree") throw new HttpError(422, "Tree SHA does not exist");
    const parents = ((c.body.parents as string[] | undefined) ?? []).map(String);
    for (const parent of parents) {
      if (s.git.objectType(parent) !== "commit") {
        throw new HttpError(422, "Parent SHA does not exist or is not a commit object");
      }
    }
    const now = isoNow();
    const author = personOf(c.body.author as Json | undefined, {
      name: s.login,
      email: `${s.login}@users.noreply.github.com`,
      date: now,
    });
    const committer = personOf(c.body.committer as Json | undefined, author);
    const sha = s.git.commitTree(tree, parents, String(c.body.message), author, committer);
    return {
      status: 201,
      body: s.shapes.commitJson(s.git.readCommit(sha)!),
      headers: { location: s.shapes.apiUrl(`git/commits/${sha}`) },
    };
  }

  function createRef(c: Context): Reply {
    const ref = String(c.body.ref);
    const sha = String(c.body.sha);
    if (!/^refs\/[^/]+\/.+/.test(ref) || ref.split("/").some((s) => s === "" || s === "..")) {
      throw new HttpError(422, "Reference name is not valid");
    }
    if (s.git.objectType(sha) === null) throw new HttpError(422, "Object does not exist");
    if (s.git.refSha(ref) !== null || !s.git.updateRef(ref, sha, ZERO_SHA)) {
      throw new HttpError(422, "Reference already exists");
    }
    s.afterRefMove(ref);
    return {
      status: 201,
      body: s.shapes.refJson(ref, sha, s.git.objectType(sha) ?? "commit"),
      headers: { location: s.shapes.apiUrl(`git/${ref}`) },
    };
  }

  function updateRef(c: Context): Reply {
    const ref = `refs/${c.params.ref}`;
    const sha = String(c.body.sha);
    const old = s.git.refSha(ref);
    if (old === null) throw new HttpError(422, "Reference does not exist");
    if (s.git.objectType(sha) !== "commit") throw new HttpError(422, "Object does not exist");
    if (c.body.force !== true && !s.git.isAncestor(old, sha)) {
      throw new HttpError(422, "Update is not a fast forward");
    }
    if (!s.git.updateRef(ref, sha, old)) throw new HttpError(422, "Reference cannot be updated");
    s.afterRefMove(ref);
    return {
      status: 200,
      body: s.shapes.refJson(ref, sha, s.git.objectType(sha) ?? "commit"),
    };
  }

  return {
    "git/get-ref": getRef,
    "git/get-commit": getCommit,
    "git/get-tree": getTree,
    "git/create-blob": createBlob,
    "git/create-tree": createTree,
    "git/create-commit": createCommit,
    "git/create-ref": createRef,
    "git/update-ref": updateRef,
  };
}
