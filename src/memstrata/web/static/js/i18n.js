// UI strings in English and Chinese. Only the console's own words are translated: stored memories are
// shown exactly as they were written, whatever the language of the interface.
const LANG_ITEM = "memstrata.lang";

const en = {
  skip: "Skip to content", menu: "Menu", language: "Language", logout: "Log out", scope: "Scope",
  user: "User", agent: "Agent", session: "Session", applyScope: "Show",
  "nav.label": "Pages", "nav.memories": "Memories", "nav.review": "Review", "nav.time": "Time travel",
  "nav.graph": "Graph", "nav.jobs": "Jobs", "nav.sessions": "Sessions", "nav.vault": "Vault", "nav.stats": "Stats",
  loginTitle: "Sign in to memstrata", apiKey: "API key", login: "Sign in",
  loginIntro: "Paste an API key to read and correct what your agents remember.",
  loginHint: "Create one with `memstrata keys create --tenant NAME`. It is kept in this browser tab only and forgotten when the tab closes.",
  keyless: "local, no key", tenant: "Tenant", defaultTenant: "default tenant", keyId: "Key", noKeyLocal: "none (local keyless mode)",
  users: "Users", agents: "Agents", allIds: "all", yourKey: "What this key allows",
  needScope: "Choose whose memories to show: enter a user (or agent, or session) in the bar above and press Show.",
  error: "Error", loading: "Loading…", cancel: "Cancel", yes: "yes", no: "no", prev: "Previous", next: "Next",
  pages: "Pages of results", showing: "{from}–{to}", nothing: "nothing here", results: "Results", refresh: "Refresh",
  search: "Search", searchButton: "Search", searchHint: "in any language, e.g. peanut allergy", searchMemories: "Search memories",
  filters: "Filters", kind: "Kind", statusLabel: "Status", keyPrefix: "Key prefix", createdFrom: "Created from",
  createdTo: "Created until", clear: "Clear", score: "score", whyRanked: "Why it ranked here",
  hitsFor: "{n} results for “{q}”", hitFor: "1 result for “{q}”", noHits: "No memory matches that search in this scope.",
  noMemories: "No memories match these filters.",
  "status.active": "active", "status.pending": "pending", "status.archived": "archived", "status.deleted": "deleted",
  "status.superseded": "superseded", "status.any": "any status",
  "kind.fact": "fact", "kind.preference": "preference", "kind.episode": "episode", "kind.procedure": "procedure",
  "kind.knowledge": "knowledge", "kind.event": "event", "kind.plan": "plan", "kind.relationship": "relationship",
  "kind.summary": "summary",
  "bd.caption": "Score breakdown", "bd.final": "Final score", "bd.fused": "Fused (keyword + vector + graph)",
  "bd.keyword": "Keyword rank (score)", "bd.vector": "Vector rank (similarity)", "bd.keyMatch": "Exact key match",
  "bd.graph": "Graph (rank · edge)", "bd.time": "Time range (rank · boost)", "bd.lifecycle": "Lifecycle factor",
  "bd.lifeParts": "Lifecycle parts", "bd.decay": "decay", "bd.recency": "recency", "bd.reinforcement": "use",
  "bd.confidence": "confidence",
  memory: "Memory", details: "Details", history: "History", provenance: "Where it came from (raw turns)",
  key: "Key", confidence: "Confidence", created: "Created", updated: "Updated", validFrom: "True from",
  validTo: "True until", recordedTo: "Held until", accessCount: "Times used", source: "Source",
  noTurns: "No raw turns: this memory was added as text, not extracted from a conversation.",
  notCurrent: "This version is no longer current: the history below shows what replaced or removed it.",
  by: "by", oldText: "Old text:", newText: "New text:", actions: "Actions", text: "Text", reason: "Reason",
  reasonHint: "Optional; kept in the history.", edit: "Edit", save: "Save", saved: "Saved. The old text is kept in the history.",
  unchanged: "The text is unchanged; nothing was saved.",
  confirm: "Confirm", confirmed: "Confirmed: the fact is active now.", reject: "Reject", rejected: "Rejected (soft-deleted).",
  archive: "Archive", archived: "Archived: out of normal search, kept and restorable.", restore: "Restore",
  restored: "Restored: back in search.", delete: "Delete", softDelete: "Delete (soft)",
  deleted: "Deleted. The history keeps its text.", purge: "Purge…", purgeForGood: "Purge for good", purged: "Purged.",
  addAgain: "Add this text again", addedAgain: "Added again as a new memory.",
  deleteTitle: "Delete this memory?",
  deleteBody: ["Soft delete: the memory leaves search, lists and agents' context at once.",
    "Nothing is destroyed: its text and every earlier version stay in the history, and you can add it again later."],
  rejectTitle: "Reject?",
  rejectBody: "Rejecting deletes a pending fact softly: it leaves the review queue and search; the history keeps it.",
  rejectCount: "{n} pending fact(s) will be rejected.",
  purgeTitle: "Purge this memory for good?",
  purgeBody: ["Purge is a hard delete: the memory, its vector, its keyword entry and its whole history are removed from the store.",
    "This cannot be undone. The raw turns it came from are kept. To hide it but keep the record, use Delete instead."],
  "action.ADD": "added", "action.UPDATE": "edited", "action.DELETE": "deleted", "action.CONFIRM": "confirmed",
  "action.ARCHIVE": "archived", "action.RESTORE": "restored", "action.CLOSE": "closed", "action.MERGE": "merged",
  "role.user": "user", "role.assistant": "assistant", "role.system": "system", "role.tool": "tool",
  reviewIntro: "Facts extracted with low confidence wait here for a person: confirm what is right, reject what is wrong.",
  reviewEmpty: "Nothing waits for review in this scope.", select: "Select", selectAll: "Select all", bulk: "Bulk actions",
  confirmSelected: "Confirm selected", rejectSelected: "Reject selected…", selectFirst: "Select at least one fact first.",
  confirmedN: "Confirmed {n}.", rejectedN: "Rejected {n}.",
  timeIntro: "See the memory as it stood at a moment: what was true then, or what the store held then.",
  moment: "Moment", axis: "Which clock", axisValid: "What was true then (valid time, as_of)",
  axisRecord: "What the store held then (record time, known_at)", searchOptional: "Search (optional)", show: "Show",
  trueAt: "True at {at}", heldAt: "Held by the store at {at}", nothingThen: "Nothing in this scope at that moment.",
  graphIntro: "People, places and things your agents know, and how they relate. Click an entity to expand its neighbours.",
  graphEmpty: "No graph yet in this scope: entities and relations are extracted from conversations (infer).",
  graphPick: "Pick an entity to see its relations over time.", graphDrawing: "Graph of entities and relations",
  entities: "Entities", findEntity: "Find an entity", relationHistory: "Relations over time", aliases: "also called",
  noRelations: "No relations.", until: "until", now: "now", legend: "Legend", currentEdge: "current relation",
  closedEdge: "closed (history)", entitiesCount: "{n} entities, {r} relations",
  jobsIntro: "Background extractions of facts from conversations. A failed job shows its error and the model's raw output.",
  allJobs: "all", "job.failed": "failed", "job.waiting": "waiting", "job.queued": "queued", "job.running": "running",
  "job.done": "done", retry: "Retry", retried: "Queued again.", runNow: "Run waiting jobs now",
  flushed: "Waiting jobs ran.", noJobs: "No jobs here.", jobError: "Error", rawOutput: "The model's raw output",
  jobResult: "Result", attempts: "attempts", turnsCount: "{n} turn(s)",
  sessionsIntro: "Conversations as they were stored, turn by turn, before any model read them.",
  noSessions: "No conversation turns in this scope.", noSession: "(no session)", turns: "Turns", lastTurn: "Last turn",
  firstTurn: "First words", endSession: "End session (extract facts)", sessionEnded: "{n} job(s) handed to extraction.",
  sessionsTruncated: "Only the first {n} turns were read; narrow the scope to see every session.",
  vaultIntro: "Markdown notes indexed as memory, and the rules layer your agents always follow.",
  notes: "Notes", note: "Note", domain: "Domain", layer: "Layer", tags: "Tags", uses: "Uses",
  noNotes: "No notes indexed.", rules: "Rules", readOnly: "read-only",
  rulesIntro: "Rules are loaded verbatim into every agent's context. Edit them in their files, not here.",
  noRules: "No rules files.", tokens: "{n} tokens",
  memoriesTotal: "memories", historyEvents: "history events", vectors: "vectors", byStatus: "By status",
  byKind: "By kind", embedder: "Embedding model", schema: "schema version",
  dangerZone: "Danger zone", eraseUser: "Erase user {user}…", eraseForGood: "Erase for good",
  eraseExplain: "Erasing a user removes everything about them for good, as privacy law may require.",
  eraseTitle: "Erase everything about {user}?",
  eraseBody: ["Erase removes every memory, raw turn, history row, vector, graph entry and job of user {user}, in every agent and session, and checks that nothing remains.",
    "Unlike Delete (soft, recoverable from history) and Purge (one memory), this cannot be undone and leaves no trace."],
  erased: "Erased: {n} rows removed.",
};

const zh = {
  skip: "跳到正文", menu: "菜单", language: "语言", logout: "退出", scope: "范围",
  user: "用户", agent: "智能体", session: "会话", applyScope: "显示",
  "nav.label": "页面", "nav.memories": "记忆", "nav.review": "待审核", "nav.time": "时间回溯",
  "nav.graph": "关系图", "nav.jobs": "任务", "nav.sessions": "会话", "nav.vault": "笔记库", "nav.stats": "统计",
  loginTitle: "登录 memstrata", apiKey: "API 密钥", login: "登录",
  loginIntro: "粘贴 API 密钥，查看并纠正智能体记住的内容。",
  loginHint: "用 `memstrata keys create --tenant 名称` 创建。密钥只保存在当前标签页，关闭后即忘记。",
  keyless: "本机免密钥", tenant: "租户", defaultTenant: "默认租户", keyId: "密钥", noKeyLocal: "无（本机免密钥模式）",
  users: "用户", agents: "智能体", allIds: "全部", yourKey: "此密钥的权限",
  needScope: "请选择要查看谁的记忆：在上方输入用户（或智能体、会话），然后点“显示”。",
  error: "错误", loading: "加载中…", cancel: "取消", yes: "是", no: "否", prev: "上一页", next: "下一页",
  pages: "结果分页", showing: "第 {from}–{to} 条", nothing: "没有内容", results: "结果", refresh: "刷新",
  search: "搜索", searchButton: "搜索", searchHint: "任何语言均可，例如：花生过敏", searchMemories: "搜索记忆",
  filters: "筛选", kind: "类型", statusLabel: "状态", keyPrefix: "键前缀", createdFrom: "创建起始",
  createdTo: "创建截止", clear: "清除", score: "得分", whyRanked: "为什么排在这里",
  hitsFor: "“{q}”的 {n} 条结果", hitFor: "“{q}”的 1 条结果", noHits: "此范围内没有匹配的记忆。", noMemories: "没有符合筛选条件的记忆。",
  "status.active": "有效", "status.pending": "待确认", "status.archived": "已归档", "status.deleted": "已删除",
  "status.superseded": "已被取代", "status.any": "全部状态",
  "kind.fact": "事实", "kind.preference": "偏好", "kind.episode": "对话", "kind.procedure": "流程",
  "kind.knowledge": "知识", "kind.event": "事件", "kind.plan": "计划", "kind.relationship": "关系",
  "kind.summary": "摘要",
  "bd.caption": "得分明细", "bd.final": "最终得分", "bd.fused": "融合分（关键词 + 向量 + 图）",
  "bd.keyword": "关键词排名（分数）", "bd.vector": "向量排名（相似度）", "bd.keyMatch": "键精确匹配",
  "bd.graph": "关系图（排名 · 边）", "bd.time": "时间范围（排名 · 加权）", "bd.lifecycle": "生命周期系数",
  "bd.lifeParts": "生命周期构成", "bd.decay": "衰减", "bd.recency": "新近", "bd.reinforcement": "使用",
  "bd.confidence": "置信度",
  memory: "记忆", details: "详情", history: "历史", provenance: "来源（原始对话）",
  key: "键", confidence: "置信度", created: "创建于", updated: "更新于", validFrom: "生效于",
  validTo: "失效于", recordedTo: "记录截止", accessCount: "使用次数", source: "来源",
  noTurns: "没有原始对话：这条记忆是直接以文本添加的，不是从对话中提取的。",
  notCurrent: "这个版本已不是当前版本：下方历史记录显示了替换或删除它的操作。",
  by: "操作者", oldText: "旧文本：", newText: "新文本：", actions: "操作", text: "文本", reason: "原因",
  reasonHint: "可选；会记录在历史中。", edit: "编辑", save: "保存", saved: "已保存，旧文本保留在历史中。",
  unchanged: "文本没有变化，未保存。",
  confirm: "确认", confirmed: "已确认：这条事实现在生效。", reject: "驳回", rejected: "已驳回（软删除）。",
  archive: "归档", archived: "已归档：不出现在常规搜索中，可随时恢复。", restore: "恢复",
  restored: "已恢复：重新出现在搜索中。", delete: "删除", softDelete: "删除（软删除）",
  deleted: "已删除，历史中仍保留其文本。", purge: "彻底清除…", purgeForGood: "永久清除", purged: "已彻底清除。",
  addAgain: "重新添加这段文本", addedAgain: "已作为新记忆重新添加。",
  deleteTitle: "删除这条记忆？",
  deleteBody: ["软删除：这条记忆会立即从搜索、列表和智能体的上下文中移除。",
    "不会销毁任何内容：它的文本和所有旧版本都保留在历史中，之后也可以重新添加。"],
  rejectTitle: "驳回？",
  rejectBody: "驳回即软删除待确认的事实：它会离开审核队列和搜索，历史中仍保留。",
  rejectCount: "将驳回 {n} 条待确认事实。",
  purgeTitle: "永久清除这条记忆？",
  purgeBody: ["彻底清除是硬删除：记忆本身、向量、关键词索引以及全部历史都会从存储中移除。",
    "此操作无法撤销。其来源的原始对话会保留。若只想隐藏但保留记录，请使用“删除”。"],
  "action.ADD": "添加", "action.UPDATE": "编辑", "action.DELETE": "删除", "action.CONFIRM": "确认",
  "action.ARCHIVE": "归档", "action.RESTORE": "恢复", "action.CLOSE": "关闭", "action.MERGE": "合并",
  "role.user": "用户", "role.assistant": "助手", "role.system": "系统", "role.tool": "工具",
  reviewIntro: "置信度较低的提取结果在此等待人工审核：正确的确认，错误的驳回。",
  reviewEmpty: "此范围内没有待审核的内容。", select: "选择", selectAll: "全选", bulk: "批量操作",
  confirmSelected: "确认所选", rejectSelected: "驳回所选…", selectFirst: "请先至少选择一条。",
  confirmedN: "已确认 {n} 条。", rejectedN: "已驳回 {n} 条。",
  timeIntro: "查看某一时刻的记忆：当时什么是真的，或当时存储里记录着什么。",
  moment: "时刻", axis: "时间轴", axisValid: "当时为真的内容（有效时间，as_of）",
  axisRecord: "当时存储所记录的内容（记录时间，known_at）", searchOptional: "搜索（可选）", show: "显示",
  trueAt: "{at} 时为真", heldAt: "{at} 时存储中的记录", nothingThen: "该时刻此范围内没有内容。",
  graphIntro: "智能体知道的人、地点和事物，以及它们之间的关系。点击实体可展开其邻居。",
  graphEmpty: "此范围内还没有关系图：实体和关系从对话中提取（infer）。",
  graphPick: "选择一个实体，查看它随时间变化的关系。", graphDrawing: "实体与关系图",
  entities: "实体", findEntity: "查找实体", relationHistory: "关系变化", aliases: "别名",
  noRelations: "没有关系。", until: "截至", now: "至今", legend: "图例", currentEdge: "当前关系",
  closedEdge: "已结束（历史）", entitiesCount: "{n} 个实体，{r} 条关系",
  jobsIntro: "从对话中提取事实的后台任务。失败的任务会显示错误和模型的原始输出。",
  allJobs: "全部", "job.failed": "失败", "job.waiting": "等待中", "job.queued": "排队中", "job.running": "运行中",
  "job.done": "完成", retry: "重试", retried: "已重新排队。", runNow: "立即运行等待中的任务",
  flushed: "等待中的任务已运行。", noJobs: "没有任务。", jobError: "错误", rawOutput: "模型原始输出",
  jobResult: "结果", attempts: "尝试次数", turnsCount: "{n} 轮对话",
  sessionsIntro: "按原样存储的对话，逐轮显示，在任何模型读取之前。",
  noSessions: "此范围内没有对话。", noSession: "（无会话）", turns: "轮数", lastTurn: "最后一轮",
  firstTurn: "开头", endSession: "结束会话（提取事实）", sessionEnded: "已交给提取的任务：{n} 个。",
  sessionsTruncated: "只读取了前 {n} 轮对话；缩小范围可查看全部会话。",
  vaultIntro: "作为记忆索引的 Markdown 笔记，以及智能体始终遵守的规则层。",
  notes: "笔记", note: "笔记", domain: "领域", layer: "层级", tags: "标签", uses: "使用",
  noNotes: "没有已索引的笔记。", rules: "规则", readOnly: "只读",
  rulesIntro: "规则会原样载入每个智能体的上下文。请在文件中修改，而不是在这里。",
  noRules: "没有规则文件。", tokens: "{n} 个 token",
  memoriesTotal: "条记忆", historyEvents: "条历史记录", vectors: "个向量", byStatus: "按状态",
  byKind: "按类型", embedder: "嵌入模型", schema: "数据结构版本",
  dangerZone: "危险操作", eraseUser: "抹除用户 {user}…", eraseForGood: "永久抹除",
  eraseExplain: "抹除用户会永久删除与其相关的一切，以满足隐私法规的要求。",
  eraseTitle: "抹除 {user} 的所有数据？",
  eraseBody: ["抹除会删除用户 {user} 在所有智能体和会话中的全部记忆、原始对话、历史、向量、关系图和任务，并检查确实没有残留。",
    "与“删除”（软删除，可从历史找回）和“彻底清除”（单条记忆）不同，此操作无法撤销，也不留任何痕迹。"],
  erased: "已抹除：删除了 {n} 行。",
};

const STRINGS = { en, zh };
let current = "en";

export function initialLang() {
  const saved = localStorage.getItem(LANG_ITEM);
  if (saved && STRINGS[saved]) return saved;
  return (navigator.languages || [navigator.language || "en"]).some((name) => String(name).toLowerCase().startsWith("zh"))
    ? "zh" : "en";
}

export function lang() {
  return current;
}

export function setLang(name) {
  current = STRINGS[name] ? name : "en";
  localStorage.setItem(LANG_ITEM, current);
  document.documentElement.lang = current === "zh" ? "zh-CN" : "en";
  applyStatic();
}

/** The string for ``key`` in the current language (English when missing), with {name} filled in. */
export function t(key, vars = {}) {
  const value = STRINGS[current][key] ?? en[key] ?? key;
  const fill = (text) => text.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
  return Array.isArray(value) ? value.map(fill) : fill(value);
}

/** Translate the page's static markup: data-i18n (text) and data-i18n-attr ("attr:key,attr:key"). */
export function applyStatic(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-attr]")) {
    for (const pair of el.dataset.i18nAttr.split(",")) {
      const [attr, key] = pair.split(":");
      el.setAttribute(attr, t(key));
    }
  }
}

export const STRING_TABLES = STRINGS;  // for the completeness test
