// Every script of the store, ready to run.
import { LuaScript } from '../scripts.js';
import * as ix from './index-scripts.js';
import * as rt from './router-scripts.js';
import * as s from './session-scripts.js';

export const SCRIPTS = {
  create: new LuaScript('create', s.CREATE),
  write: new LuaScript('write', s.WRITE),
  settle: new LuaScript('settle', s.SETTLE),
  rebuildText: new LuaScript('rebuildText', s.REBUILD_TEXT),
  readState: new LuaScript('readState', s.READ_STATE),
  readMessages: new LuaScript('readMessages', s.READ_MESSAGES),
  summary: new LuaScript('summary', s.SUMMARY),
  summaries: new LuaScript('summaries', s.SUMMARIES),
  delete: new LuaScript('delete', s.DELETE),
  saveStatus: new LuaScript('saveStatus', s.SAVE_STATUS),
  loadStatus: new LuaScript('loadStatus', s.LOAD_STATUS),
  appendEvent: new LuaScript('appendEvent', s.APPEND_EVENT),
  readEvents: new LuaScript('readEvents', s.READ_EVENTS),
  indexSet: new LuaScript('indexSet', ix.INDEX_SET),
  indexSetMany: new LuaScript('indexSetMany', ix.INDEX_SET_MANY),
  formatCheck: new LuaScript('formatCheck', ix.FORMAT_CHECK),
  indexRegister: new LuaScript('indexRegister', ix.INDEX_REGISTER),
  indexUnpend: new LuaScript('indexUnpend', ix.INDEX_UNPEND),
  indexDrop: new LuaScript('indexDrop', ix.INDEX_DROP),
  indexAdd: new LuaScript('indexAdd', ix.INDEX_ADD),
  indexUnlink: new LuaScript('indexUnlink', ix.INDEX_UNLINK),
  indexSizes: new LuaScript('indexSizes', ix.INDEX_SIZES),
  indexHeal: new LuaScript('indexHeal', ix.INDEX_HEAL),
  readChildren: new LuaScript('readChildren', ix.READ_CHILDREN),
  indexForget: new LuaScript('indexForget', ix.INDEX_FORGET),
  linkChild: new LuaScript('linkChild', ix.LINK_CHILD),
  bind: new LuaScript('bind', rt.BIND),
  unbind: new LuaScript('unbind', rt.UNBIND),
  touch: new LuaScript('touch', rt.TOUCH),
  follow: new LuaScript('follow', rt.FOLLOW),
  resolve: new LuaScript('resolve', rt.RESOLVE),
  recent: new LuaScript('recent', rt.RECENT),
  forgetSession: new LuaScript('forgetSession', rt.FORGET_SESSION),
} as const;
