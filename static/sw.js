// The service worker: it shows the pushes the server sends (docs/api.md "Push notifications")
// and opens the message when one is tapped. Registered from the account page when the user turns
// pushes on for this device; it caches nothing.
self.addEventListener('push', (event) => {
  let push = {};
  try {
    push = event.data ? event.data.json() : {};
  } catch {
    // A push that is not ours shows as a plain notice.
  }
  const title = push.sender ? `${push.sender} (${push.room || 'chat'})` : 'chat';
  const body = push.text || (push.count > 1 ? `${push.count} new messages` : 'New message');
  // One notification per room (tag): a later push for it replaces the earlier one.
  event.waitUntil(self.registration.showNotification(title, { body, tag: push.tag || 'chat', renotify: true, data: { url: push.url || '/' }, icon: '/favicon.svg' }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || '/', self.location.origin).href;
  event.waitUntil(
    (async () => {
      const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const same = open.find((client) => new URL(client.url).origin === self.location.origin);
      if (same) {
        await same.focus();
        return same.navigate(url);
      }
      return self.clients.openWindow(url);
    })(),
  );
});
