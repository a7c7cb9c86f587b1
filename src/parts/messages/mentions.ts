import type { DB } from '../../core/db';
import type { Container } from '../../core/types';

/**
 * Mentions: `@username` names a user, when that user can see the message's channel or
 * conversation; `@everyone` in a server channel names every member, and `@rolename` every holder
 * of a mentionable role, but only from the owner or a full server administrator (from anyone
 * else they stay text). Names are matched in any letter case, as usernames and role names are
 * unique in any case; one name may be a user's and a role's at once.
 */
export const MAX_MENTIONS = 20;

// @name where a username may start and end: not inside an email address or another name.
const MENTION = /(?<![A-Za-z0-9_@.-])@([A-Za-z0-9_-]{3,32})(?![A-Za-z0-9_-])/g;

export interface Mentioned {
  /** Ids of the users named who can see the container (the author included if named). */
  userIds: string[];
  everyone: boolean;
  /** Ids of the mentionable roles named (server channels only). */
  roleIds: string[];
}

export const NO_MENTIONS: Mentioned = { userIds: [], everyone: false, roleIds: [] };

export interface Mentions {
  /** Who `content` mentions in `container`; `mayMentionEveryone` is the author's right to @everyone and @role. */
  find(container: Container, content: string, mayMentionEveryone: boolean): Mentioned;
}

export function createMentions(db: DB): Mentions {
  const inServer = db.prepare<[string, string], { id: string }>(
    'SELECT u.id FROM users u JOIN members m ON m.user_id = u.id WHERE m.server_id = ? AND u.username = ? COLLATE NOCASE',
  );
  const inConversation = db.prepare<[string, string], { id: string }>(
    `SELECT u.id FROM users u JOIN conversation_members m ON m.user_id = u.id
      WHERE m.conversation_id = ? AND u.username = ? COLLATE NOCASE`,
  );
  const mentionableRole = db.prepare<[string, string], { id: string }>(
    'SELECT id FROM roles WHERE server_id = ? AND name = ? COLLATE NOCASE AND mentionable = 1',
  );
  return {
    find(container, content, mayMentionEveryone) {
      // Most messages mention nobody: one indexOf, no regular expression, no query.
      if (!content.includes('@')) return NO_MENTIONS;
      const names = new Set<string>();
      let everyone = false;
      for (const found of content.matchAll(MENTION)) {
        const name = found[1].toLowerCase();
        if (name === 'everyone') everyone = true;
        else if (names.size < MAX_MENTIONS) names.add(name);
      }
      const lookup = container.kind === 'channel' ? inServer : inConversation;
      const scope = container.kind === 'channel' ? container.serverId : container.id;
      const userIds = [...names].map((name) => lookup.get(scope, name)?.id).filter((id): id is string => id !== undefined);
      const roleIds =
        container.kind === 'channel' && mayMentionEveryone
          ? [...names].map((name) => mentionableRole.get(container.serverId, name)?.id).filter((id): id is string => id !== undefined)
          : [];
      return { userIds: [...new Set(userIds)], everyone: everyone && mayMentionEveryone && container.kind === 'channel', roleIds };
    },
  };
}
