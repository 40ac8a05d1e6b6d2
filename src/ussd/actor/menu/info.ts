// Actor hosts. The welcome menu and the Know More information screens.
import { TEXT } from './screens.js';
import { menu, type StateDef, type StateName } from './types.js';

const goodbye = () => TEXT.goodbye;

export const infoStates: Partial<Record<StateName, StateDef>> = {
  preMenu: menu(
    TEXT.welcome,
    {
      '1': 'knowMore',
      // A logged-in customer who comes home goes straight back to the services menu.
      '2': (session) => ({ to: session.context.isAuthenticated ? 'services' : 'accountMenu' }),
    },
    { exit: goodbye },
  ),
  knowMore: menu(TEXT.knowMore, { '1': 'about', '2': 'pricing', '3': 'delivery' }, { back: 'preMenu', exit: goodbye }),
  about: menu(TEXT.about, {}, { back: 'knowMore', home: true }),
  pricing: menu(TEXT.pricing, {}, { back: 'knowMore', home: true }),
  delivery: menu(TEXT.delivery, {}, { back: 'knowMore', home: true }),
};
